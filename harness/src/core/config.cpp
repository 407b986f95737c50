#include "config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace sdtw::bench {

ConfigError::ConfigError(const std::string& file, int line, const std::string& key, const std::string& what)
    : std::runtime_error(file + ":" + (line > 0 ? std::to_string(line) : std::string("?")) + ": key '" + key +
                         "': " + what),
      file_(file),
      line_(line),
      key_(key) {}

namespace {

const std::vector<std::string> kAxes = {"impl", "device", "dtype", "B", "N", "M", "D", "gamma", "bandwidth", "normalize"};

int line_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

// A mapping key as text; a key that is itself a list or mapping is shown as YAML.
std::string key_text(const YAML::Node& k) {
  if (k.IsScalar()) return k.Scalar();
  if (k.IsNull()) return "~";
  YAML::Emitter e;
  e << YAML::Flow << k;
  return e.c_str();
}

// A count that may exceed int64 ("1000000", "1e+30").
std::string format_count(double n) { return n < 9e18 ? std::to_string(static_cast<int64_t>(n)) : format_double(n); }

// Values of an integer range, counted before any is materialised.
// Why a scalar is not an int64: too large for 64 bits (all digits), or not an integer at all.
std::string not_an_integer(const std::string& text) {
  const bool digits = !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos &&
                      text.find_first_of("+-", 1) == std::string::npos;
  if (digits)
    return "integer " + text + " is out of range: it must fit in 64 bits (at most " +
           std::to_string(std::numeric_limits<int64_t>::max()) + ")";
  return "expected an integer, got '" + text + "'";
}

int64_t range_count(int64_t from, int64_t to, int64_t mul, int64_t step) {
  if (step > 0) return (to - from) / step + 1;
  int64_t count = 0;
  for (int64_t v = from; v <= to; ++count) {
    if (v > to / mul) {
      ++count;
      break;
    }
    v *= mul;
  }
  return count;
}

// One axis value as given: the raw scalars (a range is expanded here) and where they were written.
struct Axis {
  std::vector<std::string> values;  // scalars as text; "null" for ~
  std::vector<int> lines;
  int line = 0;  // line of the key
  bool set = false;
};

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& what) const {
    throw ConfigError(file_, line_of(at), key, what);
  }
  [[noreturn]] void fail(int line, const std::string& key, const std::string& what) const {
    throw ConfigError(file_, line, key, what);
  }

  // Checks that `map` is a mapping with unique keys, all in `allowed`.
  void check_keys(const YAML::Node& map, const std::string& where, const std::vector<std::string>& allowed) const {
    if (!map.IsMap()) fail(map, where, "expected a mapping");
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const auto key = key_text(it->first);
      if (!it->first.IsScalar()) fail(it->first, key, "a key in '" + where + "' must be a plain word");
      if (!seen.insert(key).second) fail(it->first, key, "duplicate key in '" + where + "'");
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(it->first, key, "unknown key in '" + where + "' (allowed: " + list + ")");
      }
    }
  }

  int64_t as_int(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected an integer");
    try {
      return n.as<int64_t>();
    } catch (const YAML::Exception&) {
      fail(n, key, not_an_integer(n.Scalar()));
    }
  }
  double as_double(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a number");
    try {
      return n.as<double>();
    } catch (const YAML::Exception&) {
      fail(n, key, "expected a number, got '" + n.Scalar() + "'");
    }
  }
  bool as_bool(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected true or false");
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(n, key, "expected true or false, got '" + n.Scalar() + "'");
    }
  }

  // Scalar, list of scalars, or an integer range {from, to, mul | step}.
  Axis read_axis(const YAML::Node& key_node, const YAML::Node& n) const {
    const auto key = key_text(key_node);
    Axis a;
    a.set = true;
    a.line = line_of(key_node);
    auto push = [&](const YAML::Node& s) {
      if (s.IsNull()) {
        a.values.push_back("null");
      } else if (s.IsScalar()) {
        a.values.push_back(s.Scalar());
      } else {
        fail(s, key, "expected a scalar in the list");
      }
      a.lines.push_back(line_of(s));
    };
    if (n.IsNull() || n.IsScalar()) {
      push(n);
    } else if (n.IsSequence()) {
      if (n.size() == 0) fail(n, key, "empty list");
      for (const auto& s : n) push(s);
    } else if (n.IsMap()) {
      check_keys(n, key, {"from", "to", "mul", "step"});
      if (!n["from"] || !n["to"]) fail(n, key, "a range needs 'from' and 'to'");
      if (static_cast<bool>(n["mul"]) == static_cast<bool>(n["step"])) fail(n, key, "a range needs exactly one of 'mul' and 'step'");
      const int64_t from = as_int(n["from"], key + ".from");
      const int64_t to = as_int(n["to"], key + ".to");
      if (from > to) fail(n["to"], key + ".to", "range 'to' (" + std::to_string(to) + ") is below 'from' (" + std::to_string(from) + ")");
      if (from <= 0) fail(n["from"], key + ".from", "range must start above zero");
      int64_t mul = 0, step = 0;
      if (n["mul"]) {
        mul = as_int(n["mul"], key + ".mul");
        if (mul < 2) fail(n["mul"], key + ".mul", "'mul' must be at least 2");
      } else {
        step = as_int(n["step"], key + ".step");
        if (step < 1) fail(n["step"], key + ".step", "'step' must be at least 1");
      }
      const int64_t count = range_count(from, to, mul, step);
      if (count > kMaxSweepPoints)
        fail(n, key, "the range has " + std::to_string(count) + " values; a sweep holds at most " +
                         std::to_string(kMaxSweepPoints) + " points");
      for (int64_t i = 0, v = from; i < count; ++i) {
        a.values.push_back(std::to_string(v));
        a.lines.push_back(line_of(n));
        if (i + 1 < count) v = mul ? v * mul : v + step;
      }
    }
    return a;
  }

  std::string file_;
};

int64_t parse_int(const Parser& P, const Axis& a, size_t i, const std::string& key, int64_t min_value) {
  YAML::Node n(a.values[i]);
  int64_t v = 0;
  try {
    v = n.as<int64_t>();
  } catch (const YAML::Exception&) {
    P.fail(a.lines[i], key, not_an_integer(a.values[i]));
  }
  if (v < min_value) P.fail(a.lines[i], key, "must be at least " + std::to_string(min_value) + ", got " + a.values[i]);
  return v;
}

SweepConfig parse_config_unchecked(const std::string& text, const std::string& file);

}  // namespace

SweepConfig parse_config(const std::string& text, const std::string& file) {
  try {
    return parse_config_unchecked(text, file);
  } catch (const YAML::Exception& e) {
    // A shape of YAML no check above anticipated: still a config error with a place.
    throw ConfigError(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "(yaml)", e.msg);
  }
}

namespace {

SweepConfig parse_config_unchecked(const std::string& text, const std::string& file) {
  Parser P(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file, e.mark.line + 1, "(syntax)", e.msg);
  }
  if (!root || root.IsNull()) throw ConfigError(file, 1, "(document)", "empty config");
  P.check_keys(root, "(top level)", {"name", "description", "settings", "defaults", "grids"});

  SweepConfig cfg;
  cfg.path = file;
  cfg.text = text;
  {
    auto slash = file.find_last_of('/');
    std::string stem = slash == std::string::npos ? file : file.substr(slash + 1);
    auto dot = stem.find_last_of('.');
    cfg.name = dot == std::string::npos ? stem : stem.substr(0, dot);
  }
  if (root["name"]) {
    if (!root["name"].IsScalar()) P.fail(root["name"], "name", "expected a string");
    cfg.name = root["name"].Scalar();
    if (cfg.name.empty() || cfg.name.find_first_of("/\\ \t") != std::string::npos)
      P.fail(root["name"], "name", "must be a non-empty word usable as a file name");
  }

  if (const auto s = root["settings"]) {
    P.check_keys(s, "settings", {"warmup", "warmup_min_ms", "reps", "seed", "verify", "verify_max_cells"});
    if (s["warmup"]) {
      const auto v = P.as_int(s["warmup"], "warmup");
      if (v < 0 || v > 1000) P.fail(s["warmup"], "warmup", "must be in 0..1000");
      cfg.settings.warmup = static_cast<int>(v);
    }
    if (s["warmup_min_ms"]) {
      const auto v = P.as_int(s["warmup_min_ms"], "warmup_min_ms");
      if (v < 0 || v > 60000) P.fail(s["warmup_min_ms"], "warmup_min_ms", "must be in 0..60000");
      cfg.settings.warmup_min_ms = static_cast<int>(v);
    }
    if (s["reps"]) {
      const auto v = P.as_int(s["reps"], "reps");
      if (v < 1 || v > 100000) P.fail(s["reps"], "reps", "must be in 1..100000");
      cfg.settings.reps = static_cast<int>(v);
    }
    if (s["seed"]) {
      const auto v = P.as_int(s["seed"], "seed");
      if (v < 0) P.fail(s["seed"], "seed", "must not be negative");
      cfg.settings.seed = static_cast<uint64_t>(v);
    }
    if (s["verify"]) cfg.settings.verify = P.as_bool(s["verify"], "verify");
    if (s["verify_max_cells"]) {
      const auto v = P.as_int(s["verify_max_cells"], "verify_max_cells");
      if (v < 1) P.fail(s["verify_max_cells"], "verify_max_cells", "must be positive");
      if (!cfg.settings.verify) P.fail(s["verify_max_cells"], "verify_max_cells", "contradicts 'verify: false'");
      cfg.settings.verify_max_cells = v;
    }
  }

  std::map<std::string, Axis> defaults;
  if (const auto d = root["defaults"]) {
    P.check_keys(d, "defaults", kAxes);
    for (auto it = d.begin(); it != d.end(); ++it) defaults[it->first.as<std::string>()] = P.read_axis(it->first, it->second);
  }

  const auto grids = root["grids"];
  if (!grids) throw ConfigError(file, 1, "grids", "missing: a config needs a list of grids");
  if (!grids.IsSequence() || grids.size() == 0) P.fail(grids, "grids", "expected a non-empty list of grids");

  std::set<std::string> seen_keys;
  std::set<std::string> grid_names;
  size_t grid_no = 0;
  for (const auto& g : grids) {
    ++grid_no;
    std::vector<std::string> allowed = kAxes;
    allowed.push_back("name");
    P.check_keys(g, "grids", allowed);
    std::string gname = "grid" + std::to_string(grid_no);
    if (g["name"]) {
      if (!g["name"].IsScalar()) P.fail(g["name"], "name", "expected a grid name");
      gname = g["name"].Scalar();
      if (!grid_names.insert(gname).second) P.fail(g["name"], "name", "grid name '" + gname + "' used twice");
    }
    std::map<std::string, Axis> ax = defaults;
    for (auto it = g.begin(); it != g.end(); ++it) {
      const auto key = it->first.Scalar();
      if (key != "name") ax[key] = P.read_axis(it->first, it->second);
    }
    for (const char* req : {"impl", "B", "N", "D"}) {
      if (!ax[req].set) P.fail(g, req, "missing in grid '" + gname + "' (and not in defaults)");
    }
    auto get = [&](const std::string& k, const std::string& def) {
      Axis a = ax[k];
      if (!a.set) {
        a.values = {def};
        a.lines = {line_of(g)};
        a.line = line_of(g);
      }
      return a;
    };
    const Axis impl = ax["impl"], B = ax["B"], N = ax["N"], D = ax["D"];
    const Axis M = get("M", "same"), device = get("device", "default"), dtype = get("dtype", "float32"),
               gamma = get("gamma", "1"), band = get("bandwidth", "null"), norm = get("normalize", "false");

    // Counted before the product is built, so a huge grid fails here and allocates nothing.
    double grid_points = 1;
    for (const Axis* a : {&impl, &device, &dtype, &B, &N, &M, &D, &gamma, &band, &norm})
      grid_points *= static_cast<double>(a->values.size());
    if (grid_points + static_cast<double>(cfg.points.size()) > static_cast<double>(kMaxSweepPoints))
      P.fail(g, "grids", "grid '" + gname + "' has " + format_count(grid_points) + " points (" +
                             std::to_string(cfg.points.size()) + " before it); a sweep holds at most " +
                             std::to_string(kMaxSweepPoints) + " points");
    for (size_t i = 0; i < impl.values.size(); ++i) {
      const auto& known = known_implementations();
      if (std::find(known.begin(), known.end(), impl.values[i]) == known.end())
        P.fail(impl.lines[i], "impl",
               "unknown implementation '" + impl.values[i] + "' (known: " + known_implementations_text() + ")");
    }
    for (size_t i = 0; i < device.values.size(); ++i) {
      const auto& v = device.values[i];
      if (v != "cpu" && v != "cuda" && v != "default") P.fail(device.lines[i], "device", "expected cpu or cuda, got '" + v + "'");
    }
    for (size_t i = 0; i < dtype.values.size(); ++i) {
      const auto& v = dtype.values[i];
      if (v != "float32" && v != "float64") P.fail(dtype.lines[i], "dtype", "expected float32 or float64, got '" + v + "'");
    }
    std::vector<double> gammas;
    for (size_t i = 0; i < gamma.values.size(); ++i) {
      double v = 0;
      try {
        v = YAML::Node(gamma.values[i]).as<double>();
      } catch (const YAML::Exception&) {
        P.fail(gamma.lines[i], "gamma", "expected a number, got '" + gamma.values[i] + "'");
      }
      if (!(v >= 0) || !std::isfinite(v)) P.fail(gamma.lines[i], "gamma", "must be a finite number >= 0, got " + gamma.values[i]);
      gammas.push_back(v);
    }
    std::vector<bool> norms;
    for (size_t i = 0; i < norm.values.size(); ++i) {
      try {
        norms.push_back(YAML::Node(norm.values[i]).as<bool>());
      } catch (const YAML::Exception&) {
        P.fail(norm.lines[i], "normalize", "expected true or false, got '" + norm.values[i] + "'");
      }
    }
    std::vector<std::optional<int64_t>> bands;
    for (size_t i = 0; i < band.values.size(); ++i) {
      const auto& v = band.values[i];
      // 0 means no band, as in sdtw_torch and softdtw-cuda-torch (and `eval --bandwidth 0`).
      const int64_t w = v == "null" || v == "~" || v == "none" ? 0 : parse_int(P, band, i, "bandwidth", 0);
      bands.emplace_back(w > 0 ? std::optional<int64_t>(w) : std::nullopt);
    }
    std::vector<int64_t> Bs, Ns, Ds;
    for (size_t i = 0; i < B.values.size(); ++i) Bs.push_back(parse_int(P, B, i, "B", 1));
    for (size_t i = 0; i < N.values.size(); ++i) Ns.push_back(parse_int(P, N, i, "N", 1));
    for (size_t i = 0; i < D.values.size(); ++i) Ds.push_back(parse_int(P, D, i, "D", 1));
    std::vector<int64_t> Ms;  // 0: same as N
    for (size_t i = 0; i < M.values.size(); ++i) Ms.push_back(M.values[i] == "same" ? 0 : parse_int(P, M, i, "M", 1));

    for (size_t ii = 0; ii < impl.values.size(); ++ii) {
      const auto& im = impl.values[ii];
      size_t made = 0;
      for (const auto& dev0 : device.values) {
        const std::string dev = dev0 == "default" ? default_device(im) : dev0;
        const bool fixed_cpu = im == "ours_cpu" || im == "reference_cpu";
        const bool fixed_cuda = im == "ours_fused" || im == "ours_unfused" || im == "ours_checkpoint";
        if ((fixed_cpu && dev != "cpu") || (fixed_cuda && dev != "cuda")) continue;
        for (const auto& dt : dtype.values)
          for (auto b : Bs)
            for (auto n : Ns)
              for (auto m0 : Ms)
                for (auto d : Ds)
                  for (auto gm : gammas)
                    for (size_t bi = 0; bi < bands.size(); ++bi)
                      for (bool nz : norms) {
                        Point p;
                        p.impl = im;
                        p.device = dev;
                        p.dtype = dt;
                        p.batch = b;
                        p.n = n;
                        p.m = m0 == 0 ? n : m0;
                        p.dim = d;
                        p.gamma = gm;
                        p.bandwidth = bands[bi];
                        p.normalize = nz;
                        p.grid = gname;
                        if (p.bandwidth && std::llabs(p.n - p.m) > *p.bandwidth)
                          P.fail(band.lines[bi], "bandwidth",
                                 "bandwidth " + std::to_string(*p.bandwidth) + " cannot reach the end cell for N=" +
                                     std::to_string(p.n) + ", M=" + std::to_string(p.m) + " (needs |N-M| <= bandwidth)");
                        ++made;
                        if (seen_keys.insert(point_key(p)).second) {
                          p.index = static_cast<int64_t>(cfg.points.size());
                          cfg.points.push_back(p);
                        }
                      }
      }
      if (made == 0)
        P.fail(impl.lines[ii], "impl", "'" + im + "' cannot run on the device(s) this grid lists (" +
                                           [&] {
                                             std::string s;
                                             for (const auto& d : device.values) s += (s.empty() ? "" : ", ") + d;
                                             return s;
                                           }() + ")");
    }
  }
  return cfg;
}

}  // namespace

SweepConfig load_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, "(file)", "cannot open the config file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), path);
}

}  // namespace sdtw::bench
