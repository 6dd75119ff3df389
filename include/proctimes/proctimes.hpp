// proctimes/proctimes.hpp — the whole C++ API.
#pragma once

#include "proctimes/boot.hpp"
#include "proctimes/clock.hpp"
#include "proctimes/error.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/filetime.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/times.hpp"
#include "proctimes/version.hpp"
