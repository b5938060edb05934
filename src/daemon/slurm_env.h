// The environment a job sees beside its own: the variables Slurm's jobs see, which scripts and
// tools written for Slurm read (snakemake reads SLURM_JOB_ID, SLURM_CPUS_ON_NODE, ...), and
// Trellis's names for the array variables. The agent adds the per-node ones (TRELLIS_NODEID, ...).
//
//   SLURM_JOB_ID SLURM_JOBID       the job id            TRELLIS_ARRAY_JOB_ID   the array's id
//   SLURM_JOB_NAME                 its name              TRELLIS_ARRAY_TASK_ID  the task's id
//   SLURM_JOB_PARTITION            its partition         SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID
//   SLURM_JOB_NODELIST SLURM_NODELIST, SLURM_JOB_NUM_NODES SLURM_NNODES, SLURM_JOB_USER,
//   SLURM_JOB_UID, SLURM_CLUSTER_NAME ("trellis")
// SLURM_SUBMIT_DIR and SLURM_SUBMIT_HOST come from the submitting command, as sbatch sets them.
#pragma once

#include <string>

#include <google/protobuf/map.h>

#include "store/state_store.h"

namespace trellis {

void add_slurm_variables(const StoredJob& job, const std::string& nodelist, int nnodes,
                         google::protobuf::Map<std::string, std::string>& env);

}  // namespace trellis
