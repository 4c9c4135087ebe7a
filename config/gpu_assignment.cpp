#include "gpu_assignment.hpp"

#include <algorithm>

namespace stereod {

double pair_pixel_rate(const DaemonConfig& config, const PairConfig& pair) {
  const CameraConfig* cam = config.camera(pair.left);
  if (!cam) return 0;
  return static_cast<double>(cam->width) * cam->height * cam->fps.hz();
}

GpuAssignment assign_gpus(const DaemonConfig& config, const GpuAssignment& current) {
  const std::vector<int>& devices = config.gpu.devices;
  GpuAssignment out;
  if (devices.empty()) return out;
  const auto listed = [&](int d) {
    return std::find(devices.begin(), devices.end(), d) != devices.end();
  };
  std::map<int, double> load;
  for (int d : devices) load[d] = 0;
  std::vector<const PairConfig*> free;
  // Pinned pairs first, then those that stay where they run; the rest are placed below.
  for (const auto& p : config.pairs) {
    int device = -1;
    if (p.gpu_device >= 0 && listed(p.gpu_device)) {
      device = p.gpu_device;
    } else if (const auto it = current.find(p.name); it != current.end() && listed(it->second)) {
      device = it->second;
    }
    if (device < 0) {
      free.push_back(&p);
      continue;
    }
    out[p.name] = device;
    load[device] += pair_pixel_rate(config, p);
  }
  // Largest first onto the least loaded device (the first listed on a tie): the greedy rule,
  // within 4/3 of the best balance.
  std::stable_sort(free.begin(), free.end(), [&](const PairConfig* a, const PairConfig* b) {
    const double ra = pair_pixel_rate(config, *a), rb = pair_pixel_rate(config, *b);
    return ra != rb ? ra > rb : a->name < b->name;
  });
  for (const PairConfig* p : free) {
    int best = devices.front();
    for (int d : devices) {
      if (load[d] < load[best]) best = d;
    }
    out[p->name] = best;
    load[best] += pair_pixel_rate(config, *p);
  }
  return out;
}

std::map<int, double> gpu_loads(const DaemonConfig& config, const GpuAssignment& assignment) {
  std::map<int, double> load;
  for (int d : config.gpu.devices) load[d] = 0;
  for (const auto& p : config.pairs) {
    const auto it = assignment.find(p.name);
    if (it != assignment.end()) load[it->second] += pair_pixel_rate(config, p);
  }
  return load;
}

}  // namespace stereod
