#include "daemon/slurm_env.h"

namespace trellis {

void add_slurm_variables(const StoredJob& job, const std::string& nodelist, int nnodes,
                         google::protobuf::Map<std::string, std::string>& env) {
  const std::string id = std::to_string(job.id);
  env["SLURM_JOB_ID"] = id;
  env["SLURM_JOBID"] = id;
  env["SLURM_JOB_NAME"] = job.name;
  env["SLURM_JOB_PARTITION"] = job.partition;
  env["SLURM_JOB_NODELIST"] = nodelist;
  env["SLURM_NODELIST"] = nodelist;
  env["SLURM_JOB_NUM_NODES"] = std::to_string(nnodes);
  env["SLURM_NNODES"] = std::to_string(nnodes);
  env["SLURM_JOB_USER"] = job.user;
  env["SLURM_JOB_UID"] = std::to_string(job.uid);
  env["SLURM_JOB_GID"] = std::to_string(job.gid);
  env["SLURM_CLUSTER_NAME"] = "trellis";
  if (job.array_job != 0) {
    const std::string array = std::to_string(job.array_job);
    const std::string task = std::to_string(job.array_task);
    env["SLURM_ARRAY_JOB_ID"] = env["TRELLIS_ARRAY_JOB_ID"] = array;
    env["SLURM_ARRAY_TASK_ID"] = env["TRELLIS_ARRAY_TASK_ID"] = task;
  }
}

}  // namespace trellis
