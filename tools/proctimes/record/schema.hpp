// SPDX-License-Identifier: MIT
// tools/proctimes/record/schema.hpp — the tables of a store, version 2
// (record::schema_version; version 1 lacked interval.live_processes, which
// a writer adds to a version 1 store). docs/STORE.md describes each column.
//
// Units: instants are nanoseconds since 1970-01-01 UTC (taken_ns, creation_ns,
// exit_ns); durations and CPU times are nanoseconds (…_ns); memory and I/O
// are bytes; busy shares are 0..1.
#pragma once

namespace proctimes::cli::record {

inline constexpr const char* schema_sql = R"sql(
CREATE TABLE process (
  id          INTEGER PRIMARY KEY,
  pid         INTEGER NOT NULL,
  creation_ns INTEGER NOT NULL,
  ppid        INTEGER NOT NULL,
  name        TEXT NOT NULL,
  command     TEXT NOT NULL,
  uid         INTEGER,
  user        TEXT NOT NULL,
  cgroup      TEXT NOT NULL
);
CREATE INDEX process_pid ON process(pid, creation_ns);

CREATE TABLE interval (
  id                    INTEGER PRIMARY KEY,
  taken_ns              INTEGER NOT NULL UNIQUE,
  number                INTEGER NOT NULL,
  interval_ns           INTEGER NOT NULL,
  uptime_ns             INTEGER NOT NULL,
  cpus                  INTEGER NOT NULL,
  busy                  REAL NOT NULL,
  cpu_busy              TEXT NOT NULL,
  load1                 REAL NOT NULL,
  load5                 REAL NOT NULL,
  load15                REAL NOT NULL,
  memory_total          INTEGER NOT NULL,
  memory_available      INTEGER NOT NULL,
  tasks                 INTEGER NOT NULL,
  processes             INTEGER NOT NULL,
  ended_source          TEXT NOT NULL,
  ended_source_note     TEXT NOT NULL,
  exit_stream           INTEGER NOT NULL,
  records_lost          INTEGER,
  records_lost_any      INTEGER NOT NULL,
  warnings              TEXT NOT NULL,
  ledger_error          TEXT NOT NULL,
  ledger_interval_ns    INTEGER,
  stat_interval_ns      INTEGER,
  ledger_cpus           INTEGER,
  busy_ns               INTEGER,
  live_ns               INTEGER,
  ended_ns              INTEGER,
  reaped_children_ns    INTEGER,
  irq_ns                INTEGER,
  softirq_ns            INTEGER,
  steal_ns              INTEGER,
  guest_ns              INTEGER,
  unattributed_ns       INTEGER,
  ended_without_record  INTEGER,
  ended_processes       INTEGER,
  children_unknown      INTEGER,
  live_processes        INTEGER
);

CREATE TABLE sample (
  interval_id               INTEGER NOT NULL,
  process_id                INTEGER NOT NULL,
  state                     TEXT NOT NULL,
  ended                     INTEGER NOT NULL,
  exit_code                 INTEGER,
  exit_signal               INTEGER,
  exit_ns                   INTEGER,
  exit_source               INTEGER NOT NULL,
  interval_kernel_ns        INTEGER NOT NULL,
  interval_user_ns          INTEGER NOT NULL,
  children_kernel_ns        INTEGER NOT NULL,
  children_user_ns          INTEGER NOT NULL,
  kernel_ns                 INTEGER NOT NULL,
  user_ns                   INTEGER NOT NULL,
  resolution_ns             INTEGER NOT NULL,
  total_resolution_ns       INTEGER NOT NULL,
  cpu_source                INTEGER,
  sampled_before_ns         INTEGER,
  basis                     TEXT NOT NULL,
  threads                   INTEGER NOT NULL,
  rss_bytes                 INTEGER,
  read_bytes                INTEGER,
  write_bytes               INTEGER,
  voluntary_switches        INTEGER,
  involuntary_switches      INTEGER,
  PRIMARY KEY (interval_id, process_id)
) WITHOUT ROWID;
CREATE INDEX sample_process ON sample(process_id);

CREATE VIEW usage AS
  SELECT i.taken_ns, i.interval_ns, p.pid, p.name, p.user, p.cgroup, p.command, s.ended,
         s.interval_kernel_ns + s.interval_user_ns + s.children_kernel_ns + s.children_user_ns AS cpu_ns
  FROM sample s JOIN interval i ON i.id = s.interval_id JOIN process p ON p.id = s.process_id;
)sql";

/// What a writer runs on a version 1 store to make it version 2: the one
/// column version 2 added (NULL in the intervals written before).
inline constexpr const char* upgrade_from_1_sql = "ALTER TABLE interval ADD COLUMN live_processes INTEGER";

}  // namespace proctimes::cli::record
