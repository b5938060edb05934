// The resource model's value types (core/node_inventory.h, core/resource_request.h,
// core/node_grant.h): parsing as Slurm writes it, what each node must give, and the texts the
// store keeps, read back to the same values.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "core/node_grant.h"
#include "core/node_inventory.h"
#include "core/resource_request.h"

namespace trellis {
namespace {

NodeInventory node(std::string_view text) {
  Result<NodeInventory> n = parse_node_inventory(text);
  EXPECT_TRUE(n) << text << ": " << (n ? "" : n.error().message);
  return n ? *n : NodeInventory{};
}

TEST(NodeInventoryTest, ParsesANodeTypeAndSaysWhatIsWrong) {
  NodeInventory gpu = node(
      "sockets=2,cores=64,threads=2,numa=4,mem=256G,gpus=a100:4,"
      "gres=license:2,features=ib+gpu");
  EXPECT_EQ(gpu.cores(), 64);
  EXPECT_EQ(gpu.cores_per_socket, 32);
  EXPECT_EQ(gpu.cpus(), 128);
  EXPECT_EQ(gpu.memory_mb, 256 * 1024);
  ASSERT_EQ(gpu.gpus.size(), 4u);
  EXPECT_EQ(gpu.gpus[2].type, "a100");
  EXPECT_EQ(gpu.gpus[2].numa, 2);  // one per NUMA node
  EXPECT_EQ(gpu.numa_of(0), 0);
  EXPECT_EQ(gpu.numa_of(17), 1);
  EXPECT_EQ(gpu.numa_of(63), 3);
  EXPECT_EQ(gpu.socket_of(40), 1);
  EXPECT_TRUE(gpu.has_feature("ib"));
  EXPECT_EQ(gres_text(gpu), "gpu:a100:4,license:2");
  EXPECT_EQ(slurm_node_line(gpu),
            "CPUs=128 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=2 "
            "RealMemory=262144");
  EXPECT_EQ(gres_text(node("cores=4,mem=1G")), "(null)");
  for (auto [text, says] : std::vector<std::pair<const char*, const char*>>{
           {"cores=0", "cores='0'"},
           {"cores=3,sockets=2", "split evenly"},
           {"cores=8,sockets=2,cores_per_socket=3", "sockets x cores_per_socket"},
           {"cores=4,mem=lots", "mem: 'lots'"},
           {"cores=4,colour=red", "unknown key 'colour'"},
           {"cores=2,numa=3", "numa=3"},
           {"cores=4,gpus=a100:0", "gpus='0'"},
           {"cores=4,gres=license", "NAME:COUNT"}}) {
    Result<NodeInventory> bad = parse_node_inventory(text);
    ASSERT_FALSE(bad) << text;
    EXPECT_NE(bad.error().message.find(says), std::string::npos) << bad.error().message;
  }
}

TEST(NodeInventoryTest, MemorySizesAsSlurmTakesThem) {
  EXPECT_EQ(*parse_memory_mb("2048", "--mem"), 2048);
  EXPECT_EQ(*parse_memory_mb("2G", "--mem"), 2048);
  EXPECT_EQ(*parse_memory_mb("1T", "--mem"), 1024 * 1024);
  EXPECT_EQ(*parse_memory_mb("1500K", "--mem"), 2);  // rounded up: never less than asked
  EXPECT_EQ(*parse_memory_mb("0", "--mem"), 0);
  EXPECT_FALSE(parse_memory_mb("", "--mem"));
  EXPECT_FALSE(parse_memory_mb("-1G", "--mem"));
  EXPECT_FALSE(parse_memory_mb("2GB", "--mem"));
  EXPECT_FALSE(parse_memory_mb("99999999999999T", "--mem"));
  EXPECT_EQ(format_memory_mb(2048), "2G");
  EXPECT_EQ(format_memory_mb(1536), "1536M");
  EXPECT_EQ(format_memory_mb(1024 * 1024), "1T");
}

TEST(ResourceRequestTest, GresAndGpuCountsAsSlurmWritesThem) {
  ResourceRequest r;
  ASSERT_TRUE(apply_gres("gpu:a100:2,license:3", r));
  EXPECT_EQ(r.gpus_per_node, 2);
  EXPECT_EQ(r.gpu_type, "a100");
  EXPECT_EQ(r.counts.at("license"), 3);
  ResourceRequest one;
  ASSERT_TRUE(apply_gres("gpu", one));
  EXPECT_EQ(one.gpus_per_node, 1);
  EXPECT_FALSE(apply_gres("gpu:v100:1", r));  // a second type
  EXPECT_FALSE(apply_gres("gpu:a:b:2", r));
  EXPECT_FALSE(apply_gres("gpu:0", r));
  std::string type;
  EXPECT_EQ(*parse_gpu_count("4", "--gpus", type), 4);
  EXPECT_EQ(type, "");
  EXPECT_EQ(*parse_gpu_count("a100:2", "--gpus", type), 2);
  EXPECT_EQ(type, "a100");
  EXPECT_FALSE(parse_gpu_count("v100:1", "--gpus-per-node", type));
  EXPECT_FALSE(parse_gpu_count("0", "--gpus", type));
  EXPECT_FALSE(parse_gpu_count(":2", "--gpus", type));
}

TEST(ResourceRequestTest, ItsTextReadsBackToTheSameRequest) {
  ResourceRequest r;
  EXPECT_EQ(encode_resource_request(r), "");
  EXPECT_EQ(*decode_resource_request(""), r);
  r.cpus_per_task = 4;
  r.mem_per_node_mb = 0;
  r.gpus_per_task = 1;
  r.gpu_type = "a100";
  r.counts["license"] = 2;
  r.sharing = NodeSharing::kExclusiveUser;
  r.constraint = "ib&fast";
  const std::string text = encode_resource_request(r);
  EXPECT_EQ(text,
            "cpus_per_task=4 mem=0 gpus_per_task=1 gpu_type=a100 gres=license:2 sharing=user "
            "constraint=ib&fast");
  EXPECT_EQ(*decode_resource_request(text), r);
  for (const char* bad : {"cpus_per_task=0", "mem=-2", "sharing=maybe", "colour=red", "gres=x",
                          "constraint=a[b]", "cpus_per_task"})
    EXPECT_FALSE(decode_resource_request(bad)) << bad;
}

TEST(ResourceRequestTest, ConstraintsOfFeatures) {
  NodeInventory n = node("cores=4,features=ib+gpu");
  EXPECT_TRUE(meets_constraint(n, ""));
  EXPECT_TRUE(meets_constraint(n, "ib"));
  EXPECT_TRUE(meets_constraint(n, "ib&gpu"));
  EXPECT_TRUE(meets_constraint(n, "ib,gpu"));
  EXPECT_FALSE(meets_constraint(n, "ib&bigmem"));
  EXPECT_TRUE(meets_constraint(n, "bigmem|gpu"));
  EXPECT_FALSE(check_constraint("a||b"));
  EXPECT_FALSE(check_constraint("[a|b]"));
  EXPECT_TRUE(check_constraint("a|b&c"));
}

TEST(ResourceRequestTest, WhatEachNodeMustGiveFollowsSlurmsDefaults) {
  NodeInventory n = node("sockets=2,cores=8,mem=16G,gpus=a100:4");
  auto demand = [&](const ResourceRequest& r, int tasks = 1, int nodes = 1, int64_t def = 0) {
    Result<NodeDemand> d = node_demand(r, tasks, nodes, n, def);
    EXPECT_TRUE(d) << (d ? "" : d.error().message);
    return d ? *d : NodeDemand{};
  };
  ResourceRequest r;
  // One core per task, the node's memory per core.
  NodeDemand plain = demand(r, 2);
  EXPECT_EQ(plain.cores, 2);
  EXPECT_EQ(plain.memory_mb, 4096);
  EXPECT_EQ(plain.gpus, 0);
  EXPECT_FALSE(plain.whole);
  // The partition's memory per core wins over the share.
  EXPECT_EQ(demand(r, 2, 1, 1000).memory_mb, 2000);
  r.cpus_per_task = 3;
  r.mem_per_cpu_mb = 512;
  NodeDemand per_cpu = demand(r, 2);
  EXPECT_EQ(per_cpu.cores, 6);
  EXPECT_EQ(per_cpu.memory_mb, 3072);
  ResourceRequest gpus;
  gpus.gpus_per_task = 1;
  gpus.cpus_per_gpu = 2;
  gpus.mem_per_gpu_mb = 1024;
  NodeDemand g = demand(gpus, 2);
  EXPECT_EQ(g.gpus, 2);
  EXPECT_EQ(g.cores, 4);
  EXPECT_EQ(g.memory_mb, 2048);
  ResourceRequest per_job;
  per_job.gpus = 6;  // -G 6 over 2 nodes: 3 each
  EXPECT_EQ(demand(per_job, 1, 2).gpus, 3);
  ResourceRequest all_memory;
  all_memory.mem_per_node_mb = 0;
  EXPECT_EQ(demand(all_memory).memory_mb, 16 * 1024);
  ResourceRequest exclusive;
  exclusive.sharing = NodeSharing::kExclusive;
  NodeDemand whole = demand(exclusive);
  EXPECT_TRUE(whole.whole);
  EXPECT_EQ(whole.cores, 8);
  EXPECT_EQ(whole.gpus, 4);
  EXPECT_EQ(tres_text(per_cpu, 2, n), "cpu=12,mem=6G,node=2,billing=12");
  EXPECT_EQ(tres_text(g, 1, n), "cpu=4,mem=2G,node=1,billing=4,gres/gpu=2");
}

TEST(ResourceRequestTest, ARequestNoNodeCanHoldSaysWhy) {
  NodeInventory n = node("cores=8,mem=16G,gpus=8");
  auto why = [&](const ResourceRequest& r, int tasks = 1) {
    Result<NodeDemand> d = node_demand(r, tasks, 1, n, 0);
    return d ? std::string() : d.error().message;
  };
  ResourceRequest gpus;
  gpus.gpus_per_node = 9;
  EXPECT_EQ(why(gpus), "9 GPUs per node asked, its nodes have 8");
  ResourceRequest typed;
  typed.gpus_per_node = 1;
  typed.gpu_type = "h100";
  EXPECT_EQ(why(typed), "1 GPUs of type h100 per node asked, its nodes have 0");
  ResourceRequest memory;
  memory.mem_per_node_mb = 32 * 1024;
  EXPECT_EQ(why(memory), "32G of memory per node asked, its nodes have 16G");
  ResourceRequest cores;
  cores.cpus_per_task = 4;
  EXPECT_EQ(why(cores, 3), "12 cores per node asked, its nodes have 8");
  ResourceRequest licence;
  licence.counts["license"] = 1;
  EXPECT_EQ(why(licence), "1 license per node asked, its nodes have 0");
  ResourceRequest feature;
  feature.constraint = "bigmem";
  EXPECT_EQ(why(feature), "its nodes have no features 'bigmem'");
  // Whole nodes too: the asked memory must fit.
  memory.sharing = NodeSharing::kExclusive;
  EXPECT_EQ(why(memory), "32G of memory per node asked, its nodes have 16G");
}

TEST(ResourceRequestTest, SlurmsOptionsMapOntoTheRequestAndTheLastWins) {
  ResourceRequest r;
  auto apply = [&](std::string_view option, std::string_view value) {
    Status ok = apply_resource_option(option, value, r);
    EXPECT_TRUE(ok) << option << "=" << value << ": " << (ok ? "" : ok.error().message);
  };
  apply("cpus-per-task", "4");
  apply("mem", "2G");
  apply("gres", "gpu:a100:2,license:1");
  apply("constraint", "ib&fast");
  apply("exclusive", "user");
  EXPECT_EQ(encode_resource_request(r),
            "cpus_per_task=4 mem=2048 gpus_per_node=2 gpu_type=a100 gres=license:1 sharing=user "
            "constraint=ib&fast");
  // The memory options exclude each other: the later one wins.
  apply("mem-per-cpu", "500M");
  EXPECT_EQ(r.mem_per_node_mb, -1);
  EXPECT_EQ(r.mem_per_cpu_mb, 500);
  apply("mem-per-gpu", "1G");
  EXPECT_EQ(r.mem_per_cpu_mb, 0);
  EXPECT_EQ(r.mem_per_gpu_mb, 1024);
  // A later --gres replaces the earlier's GPUs and counts.
  apply("gres", "license:3");
  EXPECT_EQ(r.gpus_per_node, 0);
  EXPECT_EQ(r.counts, (std::map<std::string, int64_t>{{"license", 3}}));
  apply("gres", "none");
  EXPECT_TRUE(r.counts.empty());
  apply("gpus-per-task", "a100:1");
  apply("cpus-per-gpu", "3");
  apply("gpus", "8");
  EXPECT_EQ(r.gpus_per_task, 1);
  EXPECT_EQ(r.cpus_per_gpu, 3);
  EXPECT_EQ(r.gpus, 8);
  apply("exclusive", "");
  EXPECT_EQ(r.sharing, NodeSharing::kExclusive);
  apply("oversubscribe", "");
  EXPECT_EQ(r.sharing, NodeSharing::kShared);
  EXPECT_EQ(*decode_resource_request(encode_resource_request(r)), r);
  EXPECT_TRUE(is_resource_option("gpus-per-node"));
  EXPECT_FALSE(is_resource_option("nodes"));
  for (const auto& [option, value, says] :
       std::vector<std::tuple<const char*, const char*, const char*>>{
           {"cpus-per-task", "0", "--cpus-per-task: '0'"},
           {"mem", "2GB", "--mem: '2GB'"},
           {"mem-per-cpu", "0", "--mem-per-cpu: '0' is not a size above 0"},
           {"gpus-per-node", "v100:1", "differs from 'a100'"},
           {"exclusive", "all", "--exclusive: 'all'"},
           {"constraint", "[a|b]", "brackets"},
           {"nodes", "2", "--nodes is not an option of a job's resources"}}) {
    ResourceRequest copy = r;
    Status bad = apply_resource_option(option, value, copy);
    ASSERT_FALSE(bad) << option << "=" << value;
    EXPECT_NE(bad.error().message.find(says), std::string::npos) << bad.error().message;
  }
}

// Found by fuzz_resources: a name with a space (or other bytes) in --gres or a GPU type made a
// request whose stored text read back as something else.
TEST(ResourceRequestTest, NamesThatWouldNotReadBackAreRefused) {
  for (const char* gres : {"gpunse:\346\3461 5int=ib", "lic ense:2", "gpu:a 100:1", "x=y:1"}) {
    ResourceRequest r;
    EXPECT_FALSE(apply_resource_option("gres", gres, r)) << gres;
  }
  ResourceRequest r;
  EXPECT_FALSE(apply_resource_option("gpus", "a 100:1", r));
  EXPECT_FALSE(apply_resource_option("constraint", "ib\tfast", r));
  EXPECT_FALSE(decode_resource_request("gpu_type=a=b"));
  EXPECT_TRUE(apply_resource_option("gres", "gpu:a100-sxm4_80g:2,scratch/ssd:1", r));
  EXPECT_EQ(*decode_resource_request(encode_resource_request(r)), r);
}

TEST(NodeGrantTest, GrantsReadBackAndBadTextIsRefused) {
  NodeGrant g{3, {0, 1, 2, 3, 8}, 2048, {1, 2}, {{"license", 1}}};
  EXPECT_EQ(encode_grant(g), "3:c=0-3,8;m=2048;g=1-2;r=license:1");
  EXPECT_EQ(*decode_grant(encode_grant(g)), g);
  std::vector<NodeGrant> grants = {g, {5, {7}, 0, {}, {}}};
  EXPECT_EQ(encode_grants(grants), "3:c=0-3,8;m=2048;g=1-2;r=license:1 5:c=7");
  EXPECT_EQ(*decode_grants(encode_grants(grants)), grants);
  EXPECT_TRUE(decode_grants("")->empty());
  for (const char* bad : {"x:c=1", "3", "3:c=a", "3:m=-1", "3:z=1", "3:r=license", "3:c"})
    EXPECT_FALSE(decode_grant(bad)) << bad;
}

}  // namespace
}  // namespace trellis
