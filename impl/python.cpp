#include "impl/python.h"

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "impl/plugin.h"
#include "impl/python_description.h"
#include "impl/python_worker.h"

namespace mxgate::impl {
namespace {

// Resolved specs, their workers and what their descriptions point into, for the process's life.
std::mutex g_mutex;
std::map<std::string, std::vector<const Implementation*>>& by_spec() {
  static std::map<std::string, std::vector<const Implementation*>> m;
  return m;
}
std::deque<Implementation>& storage() {
  static std::deque<Implementation> d;
  return d;
}
std::deque<PythonDescription>& descriptions() {
  static std::deque<PythonDescription> d;
  return d;
}
std::deque<std::unique_ptr<PythonWorker>>& workers() {
  static std::deque<std::unique_ptr<PythonWorker>> w;
  return w;
}

// Each spec's worker and description (for the survey's requests).
std::map<std::string, std::pair<PythonWorker*, const PythonDescription*>>& worker_of() {
  static std::map<std::string, std::pair<PythonWorker*, const PythonDescription*>> m;
  return m;
}

}  // namespace

bool is_python_spec(std::string_view spec) {
  if (spec.substr(0, kPythonPrefix.size()) != kPythonPrefix) return false;
  const std::string_view rest = spec.substr(kPythonPrefix.size());
  const std::size_t colon = rest.find(':');
  return colon != std::string_view::npos && colon > 0 && colon + 1 < rest.size();
}

std::vector<const Implementation*> resolve_python(std::string_view spec_view) {
  const std::string spec(spec_view);
  if (!is_python_spec(spec)) {
    throw PluginError(PluginError::Kind::kInput,
                      "--impl " + spec + ": a Python adapter is named py:MODULE:OBJECT");
  }
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (const auto it = by_spec().find(spec); it != by_spec().end()) return it->second;
  PythonWorker& worker = *workers().emplace_back(std::make_unique<PythonWorker>(spec));
  const std::string body = worker.start();
  PythonDescription& d = descriptions().emplace_back();
  std::vector<Implementation> impls;
  try {
    parse_python_description(body, worker, d);
    if (d.ops.empty()) throw std::invalid_argument("the adapter declares no op");
    const mxgate_impl mi{d.keep(d.name), d.keep(d.text), static_cast<uint32_t>(d.ops.size()),
                         d.ops.data()};
    const mxgate_plugin p{
        MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "python", nullptr, 1, &mi};
    impls = implementations_of(
        "python worker " + spec.substr(kPythonPrefix.size()) + " (" + python_interpreter() + ")",
        p);
  } catch (const std::invalid_argument& e) {
    throw PluginError(PluginError::Kind::kInput,
                      "--impl " + spec + ": malformed adapter description: " + e.what());
  }
  std::vector<const Implementation*> out;
  for (Implementation& i : impls) {
    i.spec = spec;
    storage().push_back(std::move(i));
    out.push_back(&storage().back());
  }
  by_spec()[spec] = out;
  worker_of()[spec] = {&worker, &d};
  return out;
}

std::optional<std::string> python_survey_cast(
    std::string_view spec_view, const Op& op, Dtype target, const std::string& inputs,
    const std::function<void(uint64_t done, uint64_t total)>& progress) {
  PythonWorker* worker = nullptr;
  const PythonDescription* d = nullptr;
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    const auto it = worker_of().find(std::string(spec_view));
    if (it == worker_of().end()) return std::nullopt;
    std::tie(worker, d) = it->second;
  }
  const OpState* state = nullptr;
  for (const OpState& s : d->states) {
    if (s.name == op.name) state = &s;
  }
  if (state == nullptr) return std::nullopt;
  std::string lines, message;
  const mxgate_status st = worker->survey(state->index, std::string(to_string(target)), inputs,
                                          progress, lines, message);
  if (st == MXGATE_UNSUPPORTED) return std::nullopt;
  if (st == MXGATE_DONE) return lines;
  for (char& c : message) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return "cast\t" + op.name + "\t" + std::string(to_string(target)) + "\t" +
         (op.contract.conventions.empty() ? "-" : op.contract.conventions.front()) + "\t0\t0\t" +
         message + "\n";
}

}  // namespace mxgate::impl
