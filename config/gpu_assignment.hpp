// Which GPU each pair runs on (docs/CONFIG.md "gpu"): a pair with gpu_device goes there; the
// others are spread over gpu.devices, balanced by the pixels per second they bring (width x
// height x frame rate of the left camera). On a reload a pair stays on the device it runs on
// unless its configuration pins it elsewhere or that device left the list, so a reload moves (and
// rebuilds) only the pairs it must; new pairs go to the least loaded device.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "daemon_config.hpp"

namespace stereod {

using GpuAssignment = std::map<std::string, int>;  // pair name -> CUDA device

// Pixels per second of a pair's frames (its left camera's size and rate); 0 when the camera is
// not in the configuration.
double pair_pixel_rate(const DaemonConfig& config, const PairConfig& pair);

// Every pair of `config` to one of config.gpu.devices. `current`: where pairs run now (empty at
// start-up: a fresh balanced assignment).
GpuAssignment assign_gpus(const DaemonConfig& config, const GpuAssignment& current = {});

// Pixels per second each device carries under `assignment` (for the log).
std::map<int, double> gpu_loads(const DaemonConfig& config, const GpuAssignment& assignment);

}  // namespace stereod
