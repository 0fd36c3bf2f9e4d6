#include "tools/mxgate/gate_protocol.h"

#include <charconv>
#include <optional>

namespace mxgate::cli {
namespace {

using report::CheckOutcome;

void put(std::string& out, std::string_view key, std::string_view value) {
  out += key;
  out += ' ';
  out += std::to_string(value.size());
  out += '\n';
  out += value;
  out += '\n';
}

uint64_t number(std::string_view key, std::string_view text) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw ProtocolError("field '" + std::string(key) + "': '" + std::string(text) +
                        "' is not a number");
  }
  return v;
}

// "A B C": the next space-separated word of `s`, consumed.
std::string_view word(std::string_view& s) {
  const std::size_t sp = s.find(' ');
  const std::string_view w = s.substr(0, sp);
  s = sp == std::string_view::npos ? std::string_view() : s.substr(sp + 1);
  return w;
}

CheckOutcome outcome(std::string_view text) {
  for (CheckOutcome o :
       {CheckOutcome::kPass, CheckOutcome::kFail, CheckOutcome::kSkip, CheckOutcome::kError}) {
    if (report::outcome_name(o) == text) return o;
  }
  throw ProtocolError("unknown result '" + std::string(text) + "'");
}

}  // namespace

std::string encode_check_run(const CheckRun& run) {
  const report::CheckReport& r = run.report;
  std::string out;
  put(out, "result", report::outcome_name(r.result));
  put(out, "cases", std::to_string(r.cases));
  if (!r.verdict.empty()) put(out, "verdict", r.verdict);
  if (r.unsupported != 0) put(out, "unsupported", std::to_string(r.unsupported));
  put(out, "detail", r.detail);
  put(out, "repro", r.repro);
  if (r.counterexample) put(out, "counterexample", *r.counterexample);
  if (r.located) {
    const report::LocatedElement& e = *r.located;
    put(out, "located",
        std::to_string(e.row) + " " + std::to_string(e.col) + " " +
            std::to_string(e.expected_bits) + " " + std::to_string(e.actual_bits) + " " +
            std::to_string(e.bit_width) + " " + std::to_string(e.ulp_distance));
  }
  if (!run.located_text.empty()) put(out, "located_text", run.located_text);
  if (r.heatmap_path) put(out, "heatmap", *r.heatmap_path);
  if (run.has_tags) put(out, "tags", "");
  for (const auto& [tag, count] : run.tags) put(out, "tag", std::to_string(count) + " " + tag);
  if (run.environment_error) put(out, "environment_error", "");
  put(out, "end", "");
  return out;
}

CheckRun decode_check_run(std::string_view in) {
  CheckRun run;
  report::CheckReport& r = run.report;
  bool ended = false;
  while (!in.empty()) {
    const std::size_t nl = in.find('\n');
    if (nl == std::string_view::npos) throw ProtocolError("truncated record header");
    std::string_view header = in.substr(0, nl);
    const std::string key(word(header));
    const uint64_t len = number(key, header);
    const std::size_t rest = in.size() - nl - 1;
    if (len >= rest || in[nl + 1 + len] != '\n') {
      throw ProtocolError("truncated value of '" + key + "'");
    }
    std::string_view value = in.substr(nl + 1, len);
    in.remove_prefix(nl + 2 + len);
    if (key == "result") {
      r.result = outcome(value);
    } else if (key == "cases") {
      r.cases = number(key, value);
    } else if (key == "verdict") {
      r.verdict = value;
    } else if (key == "unsupported") {
      r.unsupported = number(key, value);
    } else if (key == "detail") {
      r.detail = value;
    } else if (key == "repro") {
      r.repro = value;
    } else if (key == "counterexample") {
      r.counterexample = std::string(value);
    } else if (key == "located") {
      report::LocatedElement e;
      e.row = number(key, word(value));
      e.col = number(key, word(value));
      e.expected_bits = static_cast<uint32_t>(number(key, word(value)));
      e.actual_bits = static_cast<uint32_t>(number(key, word(value)));
      e.bit_width = static_cast<int>(number(key, word(value)));
      e.ulp_distance = number(key, value);
      r.located = e;
    } else if (key == "located_text") {
      run.located_text = value;
    } else if (key == "heatmap") {
      r.heatmap_path = std::string(value);
    } else if (key == "tags") {
      run.has_tags = true;
    } else if (key == "tag") {
      const uint64_t count = number(key, word(value));
      run.tags[std::string(value)] += count;
    } else if (key == "environment_error") {
      run.environment_error = true;
    } else if (key == "end") {
      ended = true;
    } else {
      throw ProtocolError("unknown field '" + key + "'");
    }
  }
  if (!ended) throw ProtocolError("no end record");
  return run;
}

}  // namespace mxgate::cli
