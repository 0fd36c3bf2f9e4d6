#include "impl/registry.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "impl/builtin.h"
#include "impl/python.h"

namespace mxgate::impl {
namespace {

namespace fs = std::filesystem;

std::mutex g_mutex;

// Converted implementations per plugin path, at stable addresses.
std::map<std::string, std::vector<const Implementation*>>& by_path() {
  static std::map<std::string, std::vector<const Implementation*>> m;
  return m;
}
std::deque<Implementation>& storage() {
  static std::deque<Implementation> d;
  return d;
}

std::string program_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

// The spec that names implementation `impl` of the plugin at `path`: the short form for a
// shipped plugin, PATH:NAME otherwise.
std::string canonical_spec(const std::string& path, const std::string& impl) {
  const std::string file = fs::path(path).filename().string();
  if (file.rfind("libmxgate_", 0) == 0 && file.size() > 13 &&
      file.substr(file.size() - 3) == ".so") {
    const std::string name = file.substr(10, file.size() - 13);
    const auto shipped = shipped_plugin_path(name);
    std::error_code ec;
    if (shipped && fs::equivalent(*shipped, path, ec)) {
      return impl == name ? name : name + ":" + impl;
    }
  }
  return path + ":" + impl;
}

const std::vector<const Implementation*>& plugin_impls(const std::string& path, bool call_init) {
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    const auto it = by_path().find(path);
    if (it != by_path().end() && !call_init) return it->second;
  }
  std::vector<Implementation> impls = load_plugin(path, call_init);  // may throw
  const std::lock_guard<std::mutex> lock(g_mutex);
  auto& slot = by_path()[path];
  if (slot.empty()) {
    for (Implementation& i : impls) {
      i.spec = canonical_spec(path, i.name);
      storage().push_back(std::move(i));
      slot.push_back(&storage().back());
    }
  }
  return slot;
}

bool is_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || (s.size() > 3 && s.substr(s.size() - 3) == ".so");
}

std::string names_of(const std::vector<const Implementation*>& impls) {
  std::string out;
  for (const Implementation* i : impls) out += (out.empty() ? "" : ", ") + i->name;
  return out;
}

std::vector<const Implementation*> pick(const std::vector<const Implementation*>& all,
                                        const std::string& who, std::string_view name) {
  for (const Implementation* i : all) {
    if (i->name == name) return {i};
  }
  throw PluginError(PluginError::Kind::kInput, "plugin '" + who + "' has no implementation '" +
                                                   std::string(name) + "' (it has " +
                                                   names_of(all) + ")");
}

}  // namespace

std::vector<std::string> plugin_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("MXGATE_PLUGIN_DIR"); env != nullptr) {
    std::string_view v(env);
    while (!v.empty()) {
      const std::size_t colon = std::min(v.find(':'), v.size());
      if (colon != 0) dirs.emplace_back(v.substr(0, colon));
      v.remove_prefix(std::min(colon + 1, v.size()));
    }
  }
  const std::string exe = program_dir();
  if (!exe.empty()) {
    for (const char* rel : {"../../plugins", "../plugins"}) {
      std::error_code ec;
      const fs::path p = fs::weakly_canonical(fs::path(exe) / rel, ec);
      if (!ec) dirs.push_back(p.string());
    }
  }
#ifdef MXGATE_PLUGIN_BUILD_DIR
  dirs.emplace_back(MXGATE_PLUGIN_BUILD_DIR);
#endif
  std::vector<std::string> unique;
  for (const std::string& d : dirs) {
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  }
  return unique;
}

std::optional<std::string> shipped_plugin_path(std::string_view name) {
  const std::string file = "libmxgate_" + std::string(name) + ".so";
  for (const std::string& d : plugin_dirs()) {
    // plugins/NAME/libmxgate_NAME.so (a build tree), or plugins/libmxgate_NAME.so (a folder of
    // installed plugins, $MXGATE_PLUGIN_DIR).
    for (const fs::path& p : {fs::path(d) / std::string(name) / file, fs::path(d) / file}) {
      std::error_code ec;
      if (fs::is_regular_file(p, ec)) return p.string();
    }
  }
  return std::nullopt;
}

std::vector<std::string> shipped_plugin_names() {
  std::set<std::string> names;
  const auto scan = [&names](const fs::path& dir, int depth, const auto& self) -> void {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      if (depth > 0 && e.is_directory(ec)) self(e.path(), depth - 1, self);
      if (f.rfind("libmxgate_", 0) == 0 && f.size() > 13 && f.substr(f.size() - 3) == ".so") {
        const std::string name = f.substr(10, f.size() - 13);
        if (shipped_plugin_path(name)) names.insert(name);
      }
    }
  };
  for (const std::string& d : plugin_dirs()) scan(d, 1, scan);
  return {names.begin(), names.end()};
}

std::vector<const Implementation*> resolve(std::string_view spec, bool call_init) {
  if (spec == "builtin") return {&builtin()};
  if (spec.rfind("py:", 0) == 0) return resolve_python(spec);
  if (spec.empty()) throw PluginError(PluginError::Kind::kInput, "--impl names nothing");
  // PATH:NAME splits at the last ':' after the last '/'.
  const std::size_t slash = spec.rfind('/');
  const std::size_t colon = spec.rfind(':');
  const bool has_name =
      colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
  const std::string head(has_name ? spec.substr(0, colon) : spec);
  const std::string name(has_name ? spec.substr(colon + 1) : std::string_view());
  if (is_path(head)) {
    const auto& all = plugin_impls(head, call_init);
    if (!has_name || name == "all") return all;
    return pick(all, head, name);
  }
  const auto path = shipped_plugin_path(head);
  if (!path) {
    std::string dirs;
    for (const std::string& d : plugin_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
    std::string shipped;
    for (const std::string& n : shipped_plugin_names()) shipped += " " + n;
    throw PluginError(PluginError::Kind::kInput,
                      "no implementation '" + std::string(spec) + "': not builtin, not a plugin " +
                          "file, and no libmxgate_" + head + ".so in " + dirs +
                          " (shipped plugins:" + (shipped.empty() ? " none" : shipped) + ")");
  }
  const auto& all = plugin_impls(*path, call_init);
  if (has_name && name != "all") return pick(all, *path, name);
  if (!has_name) {
    for (const Implementation* i : all) {
      if (i->name == head) return {i};
    }
  }
  return all;
}

std::vector<const Implementation*> resolve_list(std::string_view specs, bool call_init) {
  std::vector<const Implementation*> out;
  std::size_t at = 0;
  while (at <= specs.size()) {
    const std::size_t comma = std::min(specs.find(',', at), specs.size());
    const std::string_view one = specs.substr(at, comma - at);
    if (!one.empty()) {
      for (const Implementation* i : resolve(one, call_init)) {
        if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
      }
    }
    at = comma + 1;
  }
  if (out.empty()) throw PluginError(PluginError::Kind::kInput, "--impl names nothing");
  return out;
}

}  // namespace mxgate::impl
