#include "daemon_config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "background_yaml.hpp"
#include "engine.hpp"
#include "ingest/source_uri.hpp"
#include "ingest/synthetic_source.hpp"
#include "publish/curve_keys.hpp"
#include "publish/protocol.hpp"
#include "stereo_yaml.hpp"

namespace stereod {
namespace {

namespace fs = std::filesystem;

// Every name the loader accepts fits the wire protocol (the daemon would refuse to send it).
static_assert(kMaxNameLength <= publish::kMaxNameBytes);

// docs/CONFIG.md, "Limits".
constexpr std::size_t kMaxFileBytes = 1024 * 1024;
constexpr std::size_t kMaxCameras = 128;  // 64 pairs of two cameras
constexpr std::size_t kMaxPairs = 64;
constexpr int kMaxDevice = 63;  // CUDA device numbers 0..63

const std::vector<std::string> kLogLevels = {"trace", "debug",    "info", "warn",
                                             "error", "critical", "off"};

// yaml-cpp gives an "invalid" node for a key a const map lacks, and asking such a node its type
// throws: every look at a child's type goes through IsDefined() first (the fuzz test found two
// places that did not).
bool is_map(const YAML::Node& n) {
  return n.IsDefined() && n.IsMap();
}
bool is_sequence(const YAML::Node& n) {
  return n.IsDefined() && n.IsSequence();
}
bool is_scalar(const YAML::Node& n) {
  return n.IsDefined() && n.IsScalar();
}

// Where the second YAML document of `text` starts, if it has one with any content. The parser
// is asked for two documents at the most: YAML::LoadAll loops without end on some malformed
// input (the fuzz test found one), since its parser goes on returning empty documents.
std::optional<YAML::Mark> second_document(const std::string& text) {
  struct FirstMark : YAML::EventHandler {
    std::optional<YAML::Mark> mark;
    void seen(const YAML::Mark& m) {
      if (!mark) mark = m;
    }
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t) override { seen(m); }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { seen(m); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  const std::string&) override {
      seen(m);
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
      seen(m);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
      seen(m);
    }
    void OnMapEnd() override {}
  };
  std::istringstream in(text);
  YAML::Parser parser(in);
  FirstMark first, second;
  if (!parser.HandleNextDocument(first) || !parser.HandleNextDocument(second)) return {};
  return second.mark;
}

// The node at a dotted key below `base` ("stereo.levels"), or the deepest one that exists.
YAML::Node node_at(const YAML::Node& base, const std::string& dotted) {
  if (!base.IsDefined()) return base;
  YAML::Node n = base;
  std::stringstream parts(dotted);
  std::string part;
  while (std::getline(parts, part, '.')) {
    if (!is_map(n) || !n[part].IsDefined()) return n;
    n = n[part];
  }
  return n;
}

std::string indexed(const std::string& list, std::size_t i) {
  return list + "[" + std::to_string(i) + "]";
}

std::string resolve_path(const std::string& base_dir, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// Milliseconds keys of rigs' sync and restart sections.
void read_ms(YamlReader& r, const YAML::Node& n, const std::string& path, const char* key,
             std::chrono::milliseconds& out, long long lo, long long hi) {
  int v = static_cast<int>(out.count());
  r.read(n, path, key, v, lo, hi);
  out = std::chrono::milliseconds(v);
}

class Loader {
 public:
  Loader(const std::string& label, std::string base_dir)
      : r_(label), base_dir_(std::move(base_dir)) {}

  DaemonConfig load(const std::string& text) {
    DaemonConfig c;
    c.file = r_.file();
    YAML::Node root;
    try {
      root = YAML::Load(text);
      // Load() reads the first document and ignores the rest without a word.
      if (const auto second = second_document(text)) {
        r_.issues().push_back({r_.file(), second->line + 1, second->column + 1, "",
                               "a second YAML document: stereod reads one; remove the \"---\" "
                               "line above it (or what follows)"});
      }
    } catch (const YAML::Exception& e) {
      r_.issues().push_back(
          {r_.file(), e.mark.line + 1, e.mark.column + 1, "", "not valid YAML: " + e.msg});
      r_.throw_if_failed();
    }
    if (!r_.expect_map(root, "", false)) r_.throw_if_failed();
    r_.check_keys(root, "",
                  {"logging", "engine", "gpu", "cameras", "rigs", "pairs", "publish", "stereo",
                   "background"});
    read_logging(root["logging"], c);
    read_engine(root, c);
    read_gpu(root["gpu"], c.gpu);
    // Top-level stereo: and background: are every pair's defaults.
    read_stereo_params(r_, root["stereo"], "stereo", default_stereo_);
    default_stereo_node_ = root["stereo"];
    read_background_params(r_, root["background"], "background", default_background_);
    default_background_node_ = root["background"];
    const auto cameras = read_cameras(root["cameras"]);
    read_rigs(root["rigs"], cameras, c);
    read_pairs(root["pairs"], c);
    read_publish(root["publish"], c.publish);
    resolve_pair_outputs(c);
    r_.throw_if_failed();
    return c;
  }

 private:
  struct CameraEntry {
    CameraConfig camera;
    YAML::Node node;
    std::string path;
  };

  void read_logging(const YAML::Node& n, DaemonConfig& c) {
    if (!r_.expect_map(n, "logging")) return;
    r_.check_keys(n, "logging", {"level"});
    std::string level = c.log_level;
    r_.read(n, "logging", "level", level);
    if (!is_log_level(level)) {
      std::string msg = "unknown level \"" + level +
                        "\" (expected trace, debug, info, warn, error, critical or off)";
      const std::string guess = closest_match(level, kLogLevels);
      if (!guess.empty()) msg += "; did you mean \"" + guess + "\"?";
      r_.add(n["level"], "logging.level", msg);
    } else {
      c.log_level = level;
    }
  }

  void read_engine(const YAML::Node& root, DaemonConfig& c) {
    r_.read_choice(root, "", "engine", c.engine,
                   {{"auto", std::string("auto")},
                    {"cuda", std::string("cuda")},
                    {"cpu", std::string("cpu")}});
  }

  void read_gpu(const YAML::Node& n, GpuConfig& g) {
    if (!r_.expect_map(n, "gpu")) return;
    r_.check_keys(n, "gpu", {"device", "devices", "inflight", "zero_copy", "watch_ends"});
    if (n["device"].IsDefined() && n["devices"].IsDefined()) {
      r_.add(n["devices"], "gpu.devices",
             "give gpu.device (one GPU) or gpu.devices (a list), not both");
    }
    int device = g.devices.front();
    r_.read(n, "gpu", "device", device, 0, kMaxDevice);
    g.devices = {device};
    const YAML::Node list = n["devices"];
    if (list.IsDefined()) {
      if (!is_sequence(list) || list.size() == 0 || list.size() > kMaxDevice + 1) {
        r_.add(list, "gpu.devices", "expected a list of 1 to 64 CUDA device numbers, e.g. [0, 1]");
      } else {
        std::vector<int> devices;
        for (std::size_t i = 0; i < list.size(); ++i) {
          const std::string path = indexed("gpu.devices", i);
          int d = -1;
          if (is_scalar(list[i])) {
            try {
              d = list[i].as<int>();
            } catch (const YAML::Exception&) {
              d = -1;
            }
          }
          if (d < 0 || d > kMaxDevice) {
            r_.add(list[i], path, "expected a CUDA device number 0-63");
          } else if (std::find(devices.begin(), devices.end(), d) != devices.end()) {
            r_.add(list[i], path, "device " + std::to_string(d) + " is listed twice");
          } else {
            devices.push_back(d);
          }
        }
        if (!devices.empty()) g.devices = devices;
      }
    }
    r_.read(n, "gpu", "inflight", g.inflight, 1, 64);
    r_.read(n, "gpu", "zero_copy", g.zero_copy);
    r_.read(n, "gpu", "watch_ends", g.watch_ends);
  }

  std::vector<CameraEntry> read_cameras(const YAML::Node& n) {
    std::vector<CameraEntry> out;
    if (!n.IsDefined() || n.IsNull()) {
      r_.add(n, "cameras", "missing: at least two cameras are needed for a pair");
      return out;
    }
    if (!n.IsSequence()) {
      r_.add(n, "cameras", "expected a list of cameras");
      return out;
    }
    if (n.size() > kMaxCameras) {
      r_.add(n, "cameras",
             std::to_string(n.size()) + " cameras; at most " + std::to_string(kMaxCameras));
      return out;
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const YAML::Node cn = n[i];
      const std::string path = indexed("cameras", i);
      if (!r_.expect_map(cn, path, false)) continue;
      r_.check_keys(
          cn, path,
          {"name", "source", "width", "height", "fps", "format", "color", "loop", "raw_format"});
      const std::size_t issues_before = r_.issues().size();
      CameraConfig cam;
      r_.read(cn, path, "name", cam.name);
      r_.read(cn, path, "source", cam.uri);
      r_.read(cn, path, "width", cam.width, 16, 16384);
      r_.read(cn, path, "height", cam.height, 16, 16384);
      r_.read(cn, path, "format", cam.source_format);
      r_.read(cn, path, "color", cam.color);
      r_.read(cn, path, "loop", cam.loop);
      r_.read(cn, path, "raw_format", cam.raw_format);
      if (cn["fps"].IsDefined()) {
        std::string fps;
        r_.read(cn, path, "fps", fps);
        try {
          if (!fps.empty()) cam.fps = parse_frame_rate(fps);
        } catch (const std::exception& e) {
          r_.add(cn["fps"], path + ".fps", e.what());
        }
      }
      if (cam.name.empty()) r_.add(cn, path + ".name", "missing: every camera needs a name");
      if (cam.uri.empty()) r_.add(cn, path + ".source", "missing: the camera's source URI");
      if (!cam.name.empty() && !names.insert(cam.name).second) {
        r_.add(cn["name"], path + ".name", "camera '" + cam.name + "' is named twice");
      }
      // Its values are partly defaults now: checks built on them would only repeat the problem.
      if (r_.issues().size() != issues_before) bad_cameras_.insert(cam.name);
      out.push_back({cam, cn, path});
    }
    return out;
  }

  void read_rigs(const YAML::Node& n, const std::vector<CameraEntry>& cameras, DaemonConfig& c) {
    std::map<std::string, const CameraEntry*> by_name;
    for (const auto& e : cameras) by_name[e.camera.name] = &e;
    std::map<std::string, std::string> rig_of;  // camera -> rig
    if (!n.IsDefined() || n.IsNull()) {
      // No rigs: every camera in one rig (one pipeline, one clock).
      RigConfig rig;
      rig.name = "main";
      for (const auto& e : cameras) rig.cameras.push_back(e.camera);
      c.rigs.push_back(rig);
      check_rig(c.rigs.back(), cameras, n, "rigs");
      return;
    }
    if (!n.IsSequence()) {
      r_.add(n, "rigs", "expected a list of rigs");
      return;
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const YAML::Node rn = n[i];
      const std::string path = indexed("rigs", i);
      if (!r_.expect_map(rn, path, false)) continue;
      r_.check_keys(rn, path, {"name", "cameras", "sync", "restart"});
      RigConfig rig;
      r_.read(rn, path, "name", rig.name);
      if (rig.name.empty()) r_.add(rn, path + ".name", "missing: every rig needs a name");
      if (!rig.name.empty() && !names.insert(rig.name).second) {
        r_.add(rn["name"], path + ".name", "rig '" + rig.name + "' is named twice");
      }
      const YAML::Node list = rn["cameras"];
      if (!is_sequence(list) || list.size() == 0) {
        r_.add(list.IsDefined() ? list : rn, path + ".cameras", "expected a list of camera names");
      } else {
        read_rig_cameras(list, path + ".cameras", cameras, by_name, rig_of, rig);
      }
      read_sync(rn["sync"], path + ".sync", rig);
      read_restart(rn["restart"], path + ".restart", rig);
      c.rigs.push_back(rig);
      check_rig(c.rigs.back(), cameras, rn, path);
    }
    for (const auto& e : cameras) {
      if (!e.camera.name.empty() && !rig_of.count(e.camera.name)) {
        r_.add(e.node, e.path, "camera '" + e.camera.name + "' is in no rig");
      }
    }
  }

  // A rig's list of camera names: each a known camera in no other rig (`rig_of`: camera -> rig).
  void read_rig_cameras(const YAML::Node& list, const std::string& path,
                        const std::vector<CameraEntry>& cameras,
                        const std::map<std::string, const CameraEntry*>& by_name,
                        std::map<std::string, std::string>& rig_of, RigConfig& rig) {
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::string cpath = indexed(path, k);
      if (!is_scalar(list[k])) {
        r_.add(list[k], cpath, "expected a camera name");
        continue;
      }
      const std::string name = list[k].Scalar();
      const auto it = by_name.find(name);
      if (it == by_name.end()) {
        std::vector<std::string> known;
        for (const auto& e : cameras) known.push_back(e.camera.name);
        std::string msg = "no camera named '" + name + "'";
        const std::string guess = closest_match(name, known);
        if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
        r_.add(list[k], cpath, msg);
        continue;
      }
      if (!rig_of.emplace(name, rig.name).second) {
        r_.add(list[k], cpath, "camera '" + name + "' is already in rig '" + rig_of[name] + "'");
        continue;
      }
      rig.cameras.push_back(it->second->camera);
    }
  }

  // sync: {tolerance_ms, max_pending}
  void read_sync(const YAML::Node& sync, const std::string& path, RigConfig& rig) {
    if (!r_.expect_map(sync, path)) return;
    r_.check_keys(sync, path, {"tolerance_ms", "max_pending"});
    if (sync["tolerance_ms"].IsDefined()) {
      double ms = 0;
      r_.read(sync, path, "tolerance_ms", ms, 0.0, 10000.0);
      rig.sync_tolerance_ns = static_cast<std::int64_t>(ms * 1e6);
    }
    r_.read(sync, path, "max_pending", rig.sync_max_pending, 1, 64);
  }

  // restart: {initial_ms, max_ms, healthy_after_ms, stall_timeout_ms}
  void read_restart(const YAML::Node& restart, const std::string& path, RigConfig& rig) {
    if (!r_.expect_map(restart, path)) return;
    r_.check_keys(restart, path, {"initial_ms", "max_ms", "healthy_after_ms", "stall_timeout_ms"});
    read_ms(r_, restart, path, "initial_ms", rig.restart.initial, 10, 600000);
    read_ms(r_, restart, path, "max_ms", rig.restart.max, 10, 3600000);
    read_ms(r_, restart, path, "healthy_after_ms", rig.restart.healthy_after, 0, 3600000);
    read_ms(r_, restart, path, "stall_timeout_ms", rig.restart.stall_timeout, 0, 600000);
  }

  // Ingest's own checks (URI, sizes, rates, sources that cannot share a pipeline), reported at the
  // camera's key when the issue names one, else at the rig.
  void check_rig(const RigConfig& rig, const std::vector<CameraEntry>& cameras,
                 const YAML::Node& rig_node, const std::string& rig_path) {
    if (rig.cameras.empty()) return;
    const bool bad_camera =
        std::any_of(rig.cameras.begin(), rig.cameras.end(),
                    [&](const CameraConfig& k) { return bad_cameras_.count(k.name) != 0; });
    for (const auto& issue : validate_rig(rig)) {
      // Sizes and rates compared with a camera whose value was refused (and so is a default).
      if (bad_camera && (issue.key == "width" || issue.key == "height" || issue.key == "fps")) {
        continue;
      }
      if (issue.key == "rig name") {     // the rig's own name: its YAML key is "name"
        if (rig.name.empty()) continue;  // already reported as missing by the loader
        r_.add(node_at(rig_node, "name"), rig_path + ".name", issue.message);
        continue;
      }
      const CameraEntry* entry = nullptr;
      for (const auto& e : cameras) {
        if (!entry && e.camera.name == issue.camera && !issue.camera.empty()) entry = &e;
      }
      std::string key = issue.key == "uri"             ? "source"
                        : issue.key == "source_format" ? "format"
                                                       : issue.key;
      if (entry) {
        const YAML::Node at = key.empty() ? entry->node : node_at(entry->node, key);
        r_.add(at, key.empty() ? entry->path : entry->path + "." + key, issue.message);
      } else {
        const YAML::Node at = key.empty() ? rig_node : node_at(rig_node, key);
        r_.add(at, key.empty() ? rig_path : rig_path + "." + key, issue.message);
      }
    }
  }

  void read_pairs(const YAML::Node& n, DaemonConfig& c) {
    if (!n.IsDefined() || n.IsNull()) {
      r_.add(n, "pairs", "missing: at least one pair of cameras to match");
      return;
    }
    if (!n.IsSequence() || n.size() == 0) {
      r_.add(n, "pairs", "expected a list of pairs");
      return;
    }
    if (n.size() > kMaxPairs) {
      r_.add(n, "pairs", std::to_string(n.size()) + " pairs; at most " + std::to_string(kMaxPairs));
      return;
    }
    std::set<std::string> names;  // of the pairs read so far
    for (std::size_t i = 0; i < n.size(); ++i) {
      const YAML::Node pn = n[i];
      const std::string path = indexed("pairs", i);
      if (!r_.expect_map(pn, path, false)) continue;
      read_pair(pn, path, names, c);
    }
  }

  // Where a pair names its cameras: its own map (left, right), or a trinocular pair's trinocular:
  // section (reference, horizontal, vertical).
  struct PairCameras {
    bool tri;
    YAML::Node node;
    std::string path;
    const char* left_key;
    const char* right_key;
  };

  // One entry of pairs: into c.pairs, with what is wrong with it.
  void read_pair(const YAML::Node& pn, const std::string& path, std::set<std::string>& names,
                 DaemonConfig& c) {
    r_.check_keys(pn, path,
                  {"name", "left", "right", "calibration", "stereo", "background", "outputs",
                   "gpu_device", "trinocular"});
    PairConfig p;
    p.stereo = default_stereo_;
    p.background = default_background_;
    r_.read(pn, path, "name", p.name);
    if (!p.name.empty()) {
      // The pair's name goes on the wire (topic and header) and into subscribers' file names.
      if (const std::string why = name_problem(p.name); !why.empty()) {
        r_.add(pn["name"], path + ".name", why);
      }
    }
    const bool tri = pn["trinocular"].IsDefined();
    const PairCameras cams =
        tri ? PairCameras{true, pn["trinocular"], path + ".trinocular", "reference", "horizontal"}
            : PairCameras{false, pn, path, "left", "right"};
    if (tri) {
      for (const char* key : {"left", "right", "calibration"}) {
        if (pn[key].IsDefined()) {
          r_.add(pn[key], path + "." + key,
                 std::string("not with trinocular: a trinocular pair names its cameras under "
                             "trinocular (reference, horizontal, vertical) and takes rectified "
                             "images") +
                     (std::string(key) == "calibration" ? " (calibration: none)" : ""));
        }
      }
      p.trinocular = read_trinocular(cams.node, cams.path, p);
    } else {
      r_.read(pn, path, "left", p.left);
      r_.read(pn, path, "right", p.right);
    }
    if (pn["gpu_device"].IsDefined()) read_gpu_device(pn, path, c.gpu.devices, p);
    if (p.name.empty()) r_.add(pn, path + ".name", "missing: every pair needs a name");
    if (!p.name.empty() && !names.insert(p.name).second) {
      r_.add(pn["name"], path + ".name", "pair '" + p.name + "' is named twice");
    }
    const std::size_t before = r_.issues().size();
    read_stereo_params(r_, pn["stereo"], path + ".stereo", p.stereo);
    read_background_params(r_, pn["background"], path + ".background", p.background);
    if (!tri) read_calibration(pn["calibration"], path + ".calibration", p.calibration);
    const bool params_ok = r_.issues().size() == before;
    if (params_ok) check_engine_runs(pn, path, c.engine, p.stereo, p.background);
    if (tri && !p.trinocular) {
      c.pairs.push_back(p);
      return;  // its section is not a map: already reported
    }
    const CameraConfig* left = camera_for(c, cams.node, cams.path, cams.left_key, p.left);
    const CameraConfig* right = camera_for(c, cams.node, cams.path, cams.right_key, p.right);
    const CameraConfig* vertical =
        tri ? camera_for(c, cams.node, cams.path, "vertical", p.trinocular->vertical) : nullptr;
    if (left && right) {
      check_pair_cameras(pn, path, cams, c, p, *left, *right, vertical, params_ok);
    }
    c.pairs.push_back(p);
    pair_nodes_.push_back({pn, path});
  }

  // gpu_device: one of gpu.devices.
  void read_gpu_device(const YAML::Node& pn, const std::string& path,
                       const std::vector<int>& devices, PairConfig& p) {
    const std::size_t issues_before = r_.issues().size();
    r_.read(pn, path, "gpu_device", p.gpu_device, 0, kMaxDevice);
    if (r_.issues().size() == issues_before &&
        std::find(devices.begin(), devices.end(), p.gpu_device) == devices.end()) {
      std::string list;
      for (int d : devices) list += (list.empty() ? "" : ", ") + std::to_string(d);
      r_.add(pn["gpu_device"], path + ".gpu_device",
             "device " + std::to_string(p.gpu_device) + " is not in gpu.devices [" + list + "]");
    }
  }

  // The pair's cameras against each other (distinct, one rig, same size), then its parameters
  // and calibration against their images; sets p.rig.
  void check_pair_cameras(const YAML::Node& pn, const std::string& path, const PairCameras& cams,
                          const DaemonConfig& c, PairConfig& p, const CameraConfig& left,
                          const CameraConfig& right, const CameraConfig* vertical, bool params_ok) {
    const std::string right_path = cams.path + "." + cams.right_key;
    if (p.left == p.right)
      r_.add(cams.node[cams.right_key], right_path,
             std::string(cams.left_key) + " and " + cams.right_key + " are the same camera");
    const std::string rig_left = rig_of(c, p.left), rig_right = rig_of(c, p.right);
    if (rig_left != rig_right) {
      r_.add(cams.node[cams.right_key], right_path,
             "camera '" + p.right + "' is in rig '" + rig_right + "', camera '" + p.left +
                 "' in rig '" + rig_left + "': a pair's cameras must share a rig (one clock)");
    }
    p.rig = rig_left;
    if (bad_cameras_.count(p.left) || bad_cameras_.count(p.right)) {
      return;  // the camera's own issue says what is wrong
    }
    const std::string sizes = check_pair_sizes(left, right);
    if (!sizes.empty()) r_.add(pn, path, sizes);
    check_raw_formats(cams, left, right, vertical);
    bool vertical_ok = true;
    if (vertical) vertical_ok = check_vertical(cams.node, cams.path, c, p, left, *vertical);
    if (params_ok && sizes.empty() && vertical_ok) {
      check_params_fit(pn, path, p, left, right, vertical);
      if (!cams.tri) {
        check_calibration(pn["calibration"], path + ".calibration", p, left.width, left.height);
      }
    }
  }

  // Parameters the CUDA engine cannot run, where it may run them: with engine auto too, since
  // `--check` cannot know whether the daemon's host will have a usable GPU. Reported at the key,
  // in the pair's stereo: section or else the top-level one it inherits.
  void check_engine_runs(const YAML::Node& pn, const std::string& path, const std::string& engine,
                         const StereoParams& stereo, const BackgroundParams& background) {
    if (engine == "cpu") return;
    const auto e = cuda_engine_unsupported(stereo, background);
    if (!e) return;
    const std::string key = e->parameter();  // "stereo.aggregation", "background.…"
    const std::string section = key.substr(0, key.find('.'));
    const std::string leaf = key.substr(key.find('.') + 1);
    const bool own = is_map(pn[section]) && pn[section][leaf].IsDefined();
    const std::string why =
        e->reason() + (engine == "auto" ? " (engine: auto picks the CUDA engine wherever a GPU is "
                                          "usable)"
                                        : " (engine: " + engine + ")");
    if (own) {
      r_.add(pn[section][leaf], path + "." + key, why);
    } else {
      const YAML::Node& top = section == "stereo" ? default_stereo_node_ : default_background_node_;
      r_.add(node_at(top, leaf), key, why + "; " + path + " inherits it");
    }
  }

  // The stereo parameters against the images they will match: the pair's, and a trinocular
  // pair's vertical pair's.
  void check_params_fit(const YAML::Node& pn, const std::string& path, const PairConfig& p,
                        const CameraConfig& left, const CameraConfig& right,
                        const CameraConfig* vertical) {
    try {
      validate_for_images(p.stereo, left.width, left.height, right.width, right.height);
      if (vertical) {
        // The vertical pair runs transposed, with its range scaled (trinocular/fusion.hpp).
        StereoParams vp = p.stereo;
        vp.max_disparity =
            vertical_max_disparity(p.stereo.max_disparity, p.trinocular->model.scale());
        try {
          validate_for_images(vp, left.height, left.width, left.height, left.width);
        } catch (const ParameterError& e) {
          throw ParameterError(e.parameter(),
                               std::string(e.what()) + " (the vertical pair, with camera '" +
                                   p.trinocular->vertical + "', matches " +
                                   std::to_string(left.height) + "x" + std::to_string(left.width) +
                                   " transposed images over " + std::to_string(vp.max_disparity) +
                                   " disparities)");
        }
      }
    } catch (const ParameterError& e) {
      const std::string key = e.parameter();
      r_.add(node_at(pn, key), path + "." + key,
             e.reason() + " (camera '" + p.left + "' is " + std::to_string(left.width) + "x" +
                 std::to_string(left.height) + ")");
    }
  }

  // trinocular: {reference, horizontal, vertical, vertical_position, horizontal_model,
  // vertical_model, cost_ratio}; the reference and horizontal partner go to p.left and p.right.
  std::optional<TrinocularConfig> read_trinocular(const YAML::Node& n, const std::string& path,
                                                  PairConfig& p) {
    if (!r_.expect_map(n, path, false)) return std::nullopt;
    r_.check_keys(n, path,
                  {"reference", "horizontal", "vertical", "vertical_position", "horizontal_model",
                   "vertical_model", "cost_ratio"});
    TrinocularConfig t;
    r_.read(n, path, "reference", p.left);
    r_.read(n, path, "horizontal", p.right);
    r_.read(n, path, "vertical", t.vertical);
    if (!n["vertical_position"].IsDefined()) {
      r_.add(n, path + ".vertical_position",
             "missing: where the vertical camera is, above or below the reference");
    }
    r_.read_choice(n, path, "vertical_position", t.model.position,
                   {{"above", VerticalPosition::kAbove}, {"below", VerticalPosition::kBelow}});
    r_.read(n, path, "cost_ratio", t.cost_ratio, 0.01, 100.0);
    const bool h = n["horizontal_model"].IsDefined(), v = n["vertical_model"].IsDefined();
    if (h != v) {
      r_.add(n[h ? "horizontal_model" : "vertical_model"],
             path + (h ? ".horizontal_model" : ".vertical_model"),
             std::string("the ") + (h ? "vertical_model" : "horizontal_model") +
                 " is needed too: the two pairs' disparity scales come from both");
    }
    if (h && v) {
      read_model(n["horizontal_model"], path + ".horizontal_model", t.model.horizontal_focal_px,
                 t.model.horizontal_baseline_m);
      read_model(n["vertical_model"], path + ".vertical_model", t.model.vertical_focal_px,
                 t.model.vertical_baseline_m);
    }
    return t;
  }

  // {focal_px, baseline_m}: a rectified camera pair's model.
  void read_model(const YAML::Node& n, const std::string& path, double& focal, double& baseline) {
    if (!r_.expect_map(n, path, false)) return;
    r_.check_keys(n, path, {"focal_px", "baseline_m"});
    for (const char* key : {"focal_px", "baseline_m"}) {
      if (!n[key].IsDefined()) r_.add(n, path + "." + key, "missing");
    }
    r_.read(n, path, "focal_px", focal, 1e-6, 1e7);
    r_.read(n, path, "baseline_m", baseline, 1e-6, 1e4);
  }

  // The vertical camera: not the reference or the horizontal partner, on the reference's rig, of
  // its size. False when it does not fit.
  // The engine converts a pair's YUV frames only when both its cameras deliver YUV, and not for
  // trinocular pairs (their transpositions take gray or RGB).
  void check_raw_formats(const PairCameras& cams, const CameraConfig& left,
                         const CameraConfig& right, const CameraConfig* vertical) {
    if (vertical) {
      for (const auto& [cam, key] :
           {std::pair<const CameraConfig*, const char*>{&left, cams.left_key},
            {&right, cams.right_key},
            {vertical, "vertical"}}) {
        if (cam->raw_format.empty()) continue;
        r_.add(cams.node[key], cams.path + "." + key,
               "camera '" + cam->name + "' has raw_format " + cam->raw_format +
                   ": trinocular pairs take no raw formats (leave raw_format out: GStreamer "
                   "converts to RGB)");
      }
      return;
    }
    if (left.raw_format.empty() == right.raw_format.empty()) return;
    const CameraConfig& raw = left.raw_format.empty() ? right : left;
    const CameraConfig& other = left.raw_format.empty() ? left : right;
    r_.add(cams.node[cams.right_key], cams.path + "." + cams.right_key,
           "camera '" + raw.name + "' has raw_format " + raw.raw_format + ", camera '" +
               other.name +
               "' none: a pair's cameras both have a raw_format (UYVY or NV12) "
               "or neither");
  }

  bool check_vertical(const YAML::Node& cams, const std::string& cams_path, const DaemonConfig& c,
                      const PairConfig& p, const CameraConfig& reference,
                      const CameraConfig& vertical) {
    const YAML::Node at = cams["vertical"];
    const std::string path = cams_path + ".vertical";
    const std::size_t before = r_.issues().size();
    if (vertical.name == p.left || vertical.name == p.right) {
      r_.add(at, path,
             "camera '" + vertical.name + "' is already the " +
                 (vertical.name == p.left ? "reference" : "horizontal partner"));
    }
    const std::string rig_ref = rig_of(c, p.left), rig_vertical = rig_of(c, vertical.name);
    if (rig_ref != rig_vertical) {
      r_.add(at, path,
             "camera '" + vertical.name + "' is in rig '" + rig_vertical + "', camera '" + p.left +
                 "' in rig '" + rig_ref + "': a pair's cameras must share a rig (one clock)");
    }
    const std::string sizes = check_pair_sizes(reference, vertical);
    if (!sizes.empty()) r_.add(at, path, sizes);
    // A synthetic third view says where it is: the pair must say the same.
    try {
      const SourceUri uri = parse_source_uri(vertical.uri);
      const bool above = p.trinocular->model.position == VerticalPosition::kAbove;
      if (uri.scheme == SourceScheme::kSynthetic &&
          (uri.location == "above" || uri.location == "below") &&
          (uri.location == "above") != above) {
        r_.add(cams["vertical_position"], cams_path + ".vertical_position",
               "camera '" + vertical.name + "' is synthetic://" + uri.location +
                   ", the pair says " + (above ? "above" : "below"));
      }
    } catch (const std::exception&) {
      // A bad URI is reported with its camera.
    }
    return r_.issues().size() == before;
  }

  const CameraConfig* camera_for(const DaemonConfig& c, const YAML::Node& pn,
                                 const std::string& path, const char* key,
                                 const std::string& name) {
    if (name.empty()) {
      r_.add(pn, path + "." + key, std::string("missing: the ") + key + " camera's name");
      return nullptr;
    }
    const CameraConfig* cam = c.camera(name);
    if (!cam) {
      std::vector<std::string> known;
      for (const auto& rig : c.rigs) {
        for (const auto& k : rig.cameras) known.push_back(k.name);
      }
      std::string msg = "no camera named '" + name + "'";
      const std::string guess = closest_match(name, known);
      if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
      r_.add(pn[key], path + "." + key, msg);
    }
    return cam;
  }

  static std::string rig_of(const DaemonConfig& c, const std::string& camera) {
    for (const auto& rig : c.rigs) {
      for (const auto& k : rig.cameras) {
        if (k.name == camera) return rig.name;
      }
    }
    return "";
  }

  // calibration: FILE | none | {opencv: FILE, alpha: A} | {ros: {left: FILE, right: FILE}}
  void read_calibration(const YAML::Node& n, const std::string& path, CalibrationConfig& cal) {
    if (!n.IsDefined() || n.IsNull()) return;
    if (n.IsScalar()) {
      if (n.Scalar() == "none") return;
      cal.kind = CalibrationConfig::Kind::kOpenCv;
      cal.file = resolve_path(base_dir_, n.Scalar());
      return;
    }
    if (!r_.expect_map(n, path, false)) return;
    r_.check_keys(n, path, {"opencv", "alpha", "ros", "rectified"});
    const int forms = n["opencv"].IsDefined() + n["ros"].IsDefined() + n["rectified"].IsDefined();
    if (forms != 1) {
      r_.add(n, path,
             "expected exactly one of opencv: FILE, ros: {left: FILE, right: FILE} or rectified: "
             "{fx, baseline, ...}");
      return;
    }
    if (n["rectified"].IsDefined()) {
      read_rectified(n["rectified"], path + ".rectified", cal);
      return;
    }
    if (n["opencv"].IsDefined()) {
      cal.kind = CalibrationConfig::Kind::kOpenCv;
      r_.read(n, path, "opencv", cal.file);
      cal.file = resolve_path(base_dir_, cal.file);
      r_.read(n, path, "alpha", cal.alpha, 0.0, 1.0);
      return;
    }
    const YAML::Node ros = n["ros"];
    if (!r_.expect_map(ros, path + ".ros", false)) return;
    r_.check_keys(ros, path + ".ros", {"left", "right"});
    cal.kind = CalibrationConfig::Kind::kRos;
    r_.read(ros, path + ".ros", "left", cal.left);
    r_.read(ros, path + ".ros", "right", cal.right);
    if (cal.left.empty() || cal.right.empty()) {
      r_.add(ros, path + ".ros", "expected both left: and right: camera_info files");
    }
    cal.left = resolve_path(base_dir_, cal.left);
    cal.right = resolve_path(base_dir_, cal.right);
  }

  // calibration: {rectified: {fx, fy, cx, cy, baseline, doffs}}: fx and baseline required. The
  // principal point is checked against the cameras' size in check_calibration.
  void read_rectified(const YAML::Node& n, const std::string& path, CalibrationConfig& cal) {
    if (!r_.expect_map(n, path, false)) return;
    r_.check_keys(n, path, {"fx", "fy", "cx", "cy", "baseline", "doffs"});
    cal.kind = CalibrationConfig::Kind::kRectified;
    RectifiedModel& m = cal.rectified;
    for (const char* key : {"fx", "baseline"}) {
      if (!n[key].IsDefined()) {
        r_.add(n, path + "." + key,
               std::string("missing: the ") +
                   (std::string(key) == "fx" ? "focal length in pixels" : "baseline in metres"));
      }
    }
    constexpr double kMaxFocal = 1e6;
    r_.read(n, path, "fx", m.fx, 1e-3, kMaxFocal);
    r_.read(n, path, "baseline", m.baseline, 1e-6, 1000.0);
    r_.read(n, path, "doffs", m.doffs, -16384.0, 16384.0);
    const auto optional = [&](const char* key, std::optional<double>& out, double lo, double hi) {
      if (!n[key].IsDefined()) return;
      double v = 0;
      const std::size_t before = r_.issues().size();
      r_.read(n, path, key, v, lo, hi);
      if (r_.issues().size() == before) out = v;
    };
    optional("fy", m.fy, 1e-3, kMaxFocal);
    optional("cx", m.cx, -16384.0, 32768.0);
    optional("cy", m.cy, -16384.0, 32768.0);
  }

  // The calibration must load and be for the cameras' size (start-up errors, found by --check).
  void check_calibration(const YAML::Node& n, const std::string& path, const PairConfig& p,
                         int width, int height) {
    if (p.calibration.kind == CalibrationConfig::Kind::kRectified) {
      // A principal point far outside the image is a unit or a size mix-up.
      const RectifiedModel& m = p.calibration.rectified;
      const auto check = [&](const char* key, const std::optional<double>& v, int size) {
        if (v && (*v < -size || *v >= 2.0 * size)) {
          r_.add(node_at(n, std::string("rectified.") + key), path + ".rectified." + key,
                 std::to_string(*v) + " px lies more than an image away from camera '" + p.left +
                     "' (" + std::to_string(width) + "x" + std::to_string(height) + ")");
        }
      };
      check("cx", m.cx, width);
      check("cy", m.cy, height);
      return;
    }
    if (!p.calibration.has_files()) return;
    try {
      const StereoCalibration cal = load_calibration(p.calibration);
      check_calibration_size(cal, p.name, width, height);
    } catch (const std::exception& e) {
      r_.add(n, path, e.what());
    }
  }

  // publish.outputs and pairs[].outputs: each key read into `out` when given (so a pair's keys
  // override the defaults it starts from).
  void read_outputs(const YAML::Node& n, const std::string& path, publish::PublisherOutputs& out) {
    if (!r_.expect_map(n, path)) return;
    r_.check_keys(n, path, {"mask", "depth", "confidence", "points", "left", "direction"});
    r_.read(n, path, "mask", out.mask);
    r_.read(n, path, "depth", out.depth);
    r_.read(n, path, "confidence", out.confidence);
    r_.read(n, path, "direction", out.direction);
    using publish::LeftOutput;
    using publish::PointsOutput;
    r_.read_choice(n, path, "points", out.points,
                   {{"none", PointsOutput::kNone},
                    {"xyz", PointsOutput::kXyz},
                    {"xyzrgb", PointsOutput::kXyzRgb}});
    r_.read_choice(
        n, path, "left", out.left,
        {{"none", LeftOutput::kNone}, {"gray", LeftOutput::kGray}, {"color", LeftOutput::kColor}});
  }

  // Each pair's outputs: publish.outputs, then the pair's own keys.
  void resolve_pair_outputs(DaemonConfig& c) {
    for (std::size_t i = 0; i < c.pairs.size() && i < pair_nodes_.size(); ++i) {
      c.pairs[i].outputs = c.publish.outputs;
      read_outputs(pair_nodes_[i].first["outputs"], pair_nodes_[i].second + ".outputs",
                   c.pairs[i].outputs);
    }
  }

  void read_publish(const YAML::Node& n, publish::PublisherOptions& o) {
    if (!r_.expect_map(n, "publish")) return;
    r_.check_keys(
        n, "publish",
        {"endpoint", "bind_all", "hwm", "queue", "stats_interval_ms", "outputs", "curve"});
    const std::size_t before = r_.issues().size();
    r_.read(n, "publish", "endpoint", o.endpoint);
    r_.read(n, "publish", "bind_all", o.bind_all);
    r_.read(n, "publish", "hwm", o.hwm, 1, 1000);
    r_.read(n, "publish", "queue", o.queue, 1, 1024);
    r_.read(n, "publish", "stats_interval_ms", o.stats_interval_ms, 0, 3600000);
    read_outputs(n["outputs"], "publish.outputs", o.outputs);
    const YAML::Node curve = n["curve"];
    if (r_.expect_map(curve, "publish.curve")) {
      r_.check_keys(curve, "publish.curve", {"server_key", "clients"});
      r_.read(curve, "publish.curve", "server_key", o.curve_server_key);
      r_.read(curve, "publish.curve", "clients", o.curve_clients);
      o.curve_server_key = resolve_path(base_dir_, o.curve_server_key);
      o.curve_clients = resolve_path(base_dir_, o.curve_clients);
      // The publisher reads them at start-up, with these same functions: --check knows first.
      std::error_code ec;
      if (!o.curve_server_key.empty() && !fs::exists(o.curve_server_key, ec)) {
        r_.add(curve["server_key"], "publish.curve.server_key",
               "no such file: " + o.curve_server_key + " (stereod-keygen makes one)");
      } else if (!o.curve_server_key.empty()) {
        try {
          publish::read_server_certificate(o.curve_server_key);
        } catch (const std::runtime_error& e) {
          r_.add(curve["server_key"], "publish.curve.server_key", e.what());
        }
      }
      if (!o.curve_clients.empty() && !fs::is_directory(o.curve_clients, ec)) {
        r_.add(curve["clients"], "publish.curve.clients", "no such folder: " + o.curve_clients);
      } else if (!o.curve_clients.empty()) {
        try {
          publish::read_public_keys(o.curve_clients);
        } catch (const std::runtime_error& e) {
          r_.add(curve["clients"], "publish.curve.clients", e.what());
        }
      }
    }
    if (r_.issues().size() != before) return;
    try {
      publish::validate_publisher_options(o);
      publish::check_endpoint_on_this_host(o);
    } catch (const ParameterError& e) {
      const std::string key = e.parameter().substr(e.parameter().find('.') + 1);
      r_.add(node_at(n, key), e.parameter(), e.reason());
    }
  }

  YamlReader r_;
  std::string base_dir_;
  StereoParams default_stereo_;
  YAML::Node default_stereo_node_;      // the top-level stereo: section (undefined when absent)
  YAML::Node default_background_node_;  // the top-level background: section, likewise
  BackgroundParams default_background_;
  std::vector<std::pair<YAML::Node, std::string>> pair_nodes_;  // parallel to DaemonConfig::pairs
  std::set<std::string> bad_cameras_;  // cameras with an issue of their own
};

bool same_camera(const CameraConfig& a, const CameraConfig& b) {
  return a.name == b.name && a.uri == b.uri && a.width == b.width && a.height == b.height &&
         a.fps.num == b.fps.num && a.fps.den == b.fps.den && a.source_format == b.source_format &&
         a.color == b.color && a.loop == b.loop && a.raw_format == b.raw_format;
}

bool same_rig(const RigConfig& a, const RigConfig& b) {
  if (a.cameras.size() != b.cameras.size()) return false;
  for (std::size_t i = 0; i < a.cameras.size(); ++i) {
    if (!same_camera(a.cameras[i], b.cameras[i])) return false;
  }
  return a.sync_tolerance_ns == b.sync_tolerance_ns && a.sync_max_pending == b.sync_max_pending &&
         a.restart.initial == b.restart.initial && a.restart.max == b.restart.max &&
         a.restart.healthy_after == b.restart.healthy_after &&
         a.restart.stall_timeout == b.restart.stall_timeout;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

StereoCalibration load_calibration(const CalibrationConfig& cal) {
  if (cal.kind == CalibrationConfig::Kind::kRos) return load_ros_calibration(cal.left, cal.right);
  CalibrationOptions options;
  options.alpha = cal.alpha;
  return load_opencv_calibration(cal.file, options);
}

publish::DepthCalibration pair_camera_model(const PairConfig& pair, const RigConfig& rig,
                                            const StereoCalibration* loaded) {
  publish::DepthCalibration m;
  if (pair.calibration.has_files()) {
    if (!loaded) throw std::invalid_argument("pair '" + pair.name + "': calibration not loaded");
    m.focal_px = loaded->focal_px;
    m.fy_px = loaded->fy_px;
    m.cx_px = loaded->cx;
    m.cy_px = loaded->cy;
    m.baseline_m = loaded->baseline_m;
    m.doffs_px = loaded->doffs_px;
    return m;
  }
  const CameraConfig* left = nullptr;
  for (const auto& c : rig.cameras) {
    if (c.name == pair.left) left = &c;
  }
  if (pair.calibration.kind == CalibrationConfig::Kind::kRectified) {
    const RectifiedModel& r = pair.calibration.rectified;
    const int w = left ? left->width : 0, h = left ? left->height : 0;
    m.focal_px = r.fx;
    m.fy_px = r.fy.value_or(r.fx);
    m.cx_px = r.cx.value_or((w - 1) / 2.0);
    m.cy_px = r.cy.value_or((h - 1) / 2.0);
    m.baseline_m = r.baseline;
    m.doffs_px = r.doffs;
    return m;
  }
  if (left) {
    const SourceUri uri = parse_source_uri(left->uri);
    if (uri.scheme == SourceScheme::kSynthetic) {
      const SyntheticCamera s = synthetic_camera(synthetic_options(*left, uri));
      m.focal_px = s.fx;
      m.fy_px = s.fy;
      m.cx_px = s.cx;
      m.cy_px = s.cy;
      m.baseline_m = s.baseline_m;
      m.doffs_px = 0;
    }
  }
  return m;
}

bool is_log_level(const std::string& name) {
  return std::find(kLogLevels.begin(), kLogLevels.end(), name) != kLogLevels.end();
}

const RigConfig* DaemonConfig::rig(const std::string& name) const {
  for (const auto& r : rigs) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

const CameraConfig* DaemonConfig::camera(const std::string& name) const {
  for (const auto& r : rigs) {
    for (const auto& c : r.cameras) {
      if (c.name == name) return &c;
    }
  }
  return nullptr;
}

DaemonConfig parse_daemon_config(const std::string& text, const std::string& label,
                                 const std::string& base_dir) {
  Loader loader(label, base_dir);
  return loader.load(text);
}

std::string read_config_file(const std::string& file) {
  const auto fail = [&](const std::string& why) {
    throw ConfigError({{file.empty() ? "''" : file, 0, 0, "", why}});
  };
  if (file.empty()) fail("no file given (the name is empty)");
  // Non-blocking, so that a FIFO cannot hold the loader up before it is refused.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) fail(std::string("cannot open the file (") + std::strerror(errno) + ")");
  std::string text;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail(std::string("cannot read it (") + std::strerror(errno) + ")");
    if (S_ISDIR(st.st_mode)) fail("is a folder, not a configuration file");
    if (!S_ISREG(st.st_mode)) {
      fail(
          "is not a regular file (a FIFO, a device or a socket): stereod reads its "
          "configuration from a file");
    }
    const auto too_big = [&](std::uint64_t bytes) {
      fail(std::to_string(bytes) + " bytes: a configuration is at most 1 MiB (" +
           std::to_string(kMaxFileBytes) + " bytes)");
    };
    if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) {
      too_big(static_cast<std::uint64_t>(st.st_size));
    }
    // Read to the limit and one byte more: the file may have grown since.
    text.resize(kMaxFileBytes + 1);
    std::size_t got = 0;
    for (;;) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(std::string("cannot read it (") + std::strerror(errno) + ")");
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
      if (got > kMaxFileBytes) too_big(got);
    }
    text.resize(got);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

DaemonConfig load_daemon_config(const std::string& file) {
  const std::string text = read_config_file(file);
  const std::string dir = fs::path(file).parent_path().string();
  return parse_daemon_config(text, file, dir.empty() ? "." : dir);
}

bool ConfigDiff::empty() const {
  return rigs_rebuilt.empty() && rigs_removed.empty() && pairs_rebuilt.empty() &&
         pairs_removed.empty() && pairs_retuned.empty() && pairs_outputs.empty() &&
         !engines_rebuilt && !gpu_placement && !publisher_rebuilt && !publisher_outputs &&
         !log_level;
}

std::string ConfigDiff::summary() const {
  std::vector<std::string> parts;
  if (!rigs_rebuilt.empty()) parts.push_back("rigs rebuilt: " + join(rigs_rebuilt));
  if (!rigs_removed.empty()) parts.push_back("rigs removed: " + join(rigs_removed));
  if (!pairs_rebuilt.empty()) parts.push_back("pairs rebuilt: " + join(pairs_rebuilt));
  if (!pairs_removed.empty()) parts.push_back("pairs removed: " + join(pairs_removed));
  if (!pairs_retuned.empty()) parts.push_back("pairs retuned: " + join(pairs_retuned));
  if (!pairs_outputs.empty()) parts.push_back("pair outputs changed: " + join(pairs_outputs));
  if (engines_rebuilt) parts.push_back("engines rebuilt");
  if (gpu_placement) parts.push_back("GPU placement changed");
  if (publisher_rebuilt) parts.push_back("publisher restarted");
  if (publisher_outputs) parts.push_back("outputs changed");
  if (log_level) parts.push_back("log level changed");
  return parts.empty() ? "no changes" : join(parts);
}

ConfigDiff diff_configs(const DaemonConfig& from, const DaemonConfig& to) {
  ConfigDiff d;
  for (const auto& rig : to.rigs) {
    const RigConfig* old = from.rig(rig.name);
    if (!old || !same_rig(*old, rig)) d.rigs_rebuilt.push_back(rig.name);
  }
  for (const auto& rig : from.rigs) {
    if (!to.rig(rig.name)) d.rigs_removed.push_back(rig.name);
  }
  d.engines_rebuilt = from.engine != to.engine || !from.gpu.same_engines(to.gpu);
  d.gpu_placement = from.gpu.devices != to.gpu.devices;
  auto rebuilt_rig = [&](const std::string& name) {
    return std::find(d.rigs_rebuilt.begin(), d.rigs_rebuilt.end(), name) != d.rigs_rebuilt.end();
  };
  for (const auto& p : to.pairs) {
    const PairConfig* old = nullptr;
    for (const auto& q : from.pairs) {
      if (q.name == p.name) old = &q;
    }
    if (old && old->gpu_device != p.gpu_device) d.gpu_placement = true;
    if (!old || old->rig != p.rig || old->left != p.left || old->right != p.right ||
        !(old->calibration == p.calibration) || old->trinocular != p.trinocular ||
        rebuilt_rig(p.rig)) {
      d.pairs_rebuilt.push_back(p.name);
    } else {
      if (old->stereo != p.stereo || old->background != p.background) {
        d.pairs_retuned.push_back(p.name);
      }
      if (old->outputs != p.outputs) d.pairs_outputs.push_back(p.name);
    }
  }
  for (const auto& q : from.pairs) {
    bool kept = false;
    for (const auto& p : to.pairs) kept = kept || p.name == q.name;
    if (!kept) d.pairs_removed.push_back(q.name);
  }
  const auto& a = from.publish;
  const auto& b = to.publish;
  d.publisher_rebuilt = a.endpoint != b.endpoint || a.bind_all != b.bind_all || a.hwm != b.hwm ||
                        a.queue != b.queue || a.stats_interval_ms != b.stats_interval_ms ||
                        a.curve_server_key != b.curve_server_key ||
                        a.curve_clients != b.curve_clients;
  d.publisher_outputs = a.outputs != b.outputs;
  d.log_level = from.log_level != to.log_level;
  return d;
}

}  // namespace stereod
