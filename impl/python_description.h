// The description a Python worker sends in its handshake, parsed into the plugin ABI's tables
// (mxgate_op, mxgate_contract) whose ops run through the worker; impl/plugin.h's
// implementations_of then checks it as it checks a plugin's.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "impl/op.h"
#include "impl/python_worker.h"

namespace mxgate::impl {

// What an op's `state` points to: its worker and its place in the description.
struct OpState {
  PythonWorker* worker;
  uint32_t index;
  std::string name;
};

// Everything a description points into, for as long as the implementation lives.
struct PythonDescription {
  std::deque<std::string> strings;
  std::vector<mxgate_op> ops;
  std::deque<OpState> states;
  std::deque<std::vector<mxgate_tactic>> tactics;  // per op that declares any
  std::string name, text;
  const char* keep(std::string s) { return strings.emplace_back(std::move(s)).c_str(); }
};

// The handshake body: "impl NAME", "description TEXT", then per op "op NAME" and its fields
// and "tactic NAME [ACCUMULATOR]" lines (python/mxgate/adapter.py describe()), into `d`, each op
// running on `worker`. Throws std::invalid_argument naming the line that is malformed.
void parse_python_description(const std::string& body, PythonWorker& worker, PythonDescription& d);

}  // namespace mxgate::impl
