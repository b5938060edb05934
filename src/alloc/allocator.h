// Allocator: the one interface every placement algorithm implements ("where does this job go").
//
// Allocators are pure and deterministic: given the free set and a request they return a decision,
// with no I/O, no clock and no hidden state that changes between calls. That is what lets the
// simulator and the live daemon run the same code, and lets tests compare against brute force.
// An allocator is built for one Machine by the registry (alloc/registry.h) and may precompute
// anything that depends only on the machine (curves, hop tables).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/key_value.h"
#include "core/node_grant.h"
#include "core/node_set.h"
#include "core/request.h"
#include "core/result.h"
#include "topology/box.h"
#include "topology/curve.h"
#include "topology/machine.h"

namespace trellis {

// A decision: the nodes given to the job, and for contiguous allocators the box they form.
struct Placement {
  NodeSet nodes;
  std::optional<Box> box;
  std::string note;  // optional detail for people, e.g. "no single interval fits: min span"
  // On a machine whose nodes have an inventory (alloc/node_sharing.h): what the job holds on
  // each of its nodes, in node order; empty otherwise.
  std::vector<NodeGrant> grants;
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  // The registry name, e.g. "contiguous", "linear-bestfit-hilbert".
  virtual std::string_view name() const = 0;

  // Can `request` ever be placed on this machine, even when every node is free? An error here
  // means the request is impossible (a scheduler rejects the job rather than queue it forever);
  // its code is Error::Code::kNeverFits (never_fits() builds it) and its message says why.
  virtual Status check(const Request& request) const;

  // Chooses nodes for `request` among `free` (free.size() == machine node count). The returned
  // nodes are a subset of `free` with exactly request.nodes members. An error with code
  // kDoesNotFitNow (does_not_fit_now()) means the request does not fit now; it is built without
  // formatting, as policies call this many times per pass, so a caller that wants to say why
  // builds the text itself (cli/alloc_report.h). A request that check() refuses gives check()'s
  // never-fits error.
  virtual Result<Placement> allocate(const NodeSet& free, const Request& request) const = 0;

  // The order in which this allocator lays nodes out, when it works along a curve (buddy, the
  // linear allocators); nullptr otherwise. Gang policies place their partitions along it.
  virtual const Curve* node_order() const { return nullptr; }

 protected:
  explicit Allocator(const Machine& machine) : machine_(machine) {}
  const Machine& machine() const { return machine_; }

 private:
  Machine machine_;
};

// The error allocate() returns when the request does not fit on the nodes free now: code
// kDoesNotFitNow and a fixed short message (no formatting, no heap allocation).
Error does_not_fit_now();

// The error check() returns for a request this machine can never hold: code kNeverFits.
Error never_fits(std::string why);

// Allocator options from the command line or a config file (key=value), e.g. search=brute for
// the contiguous allocator, seed=7 for the random one. Factories reject keys they do not know
// with only(), whose error names the allocator, the key and the keys it takes.
struct AllocatorOptions : KeyValueOptions {
  AllocatorOptions() : KeyValueOptions("allocator") {}
};

}  // namespace trellis
