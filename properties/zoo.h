// Proof on the bug zoo (docs/bug_classes.md): with one fault planted, which properties fail, after
// how many cases (median over seeds), and the shrunk counterexample, checked against the
// minimal case of docs/bug_classes.md ("or smaller"). `mxgate zoo` prints it;
// tests/property_zoo.cpp asserts detection and minimality for every fault.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/faults.h"
#include "gpu/backend.h"
#include "properties/property.h"

namespace mxgate::properties {

// What docs/bug_classes.md §2 says about a fault, as data: the property expected to catch it
// first, the minimal counterexample in words, and a predicate: is a shrunk case that minimal case
// or smaller?
struct ZooClass {
  dispatch::Fault fault;
  std::string_view property;
  std::string_view minimal;
  bool (*is_minimal)(const Case&);
  // Shows only on a device backend (Z29: 2^31 elements): on the host the zoo reports it not
  // applicable, never detected or missed.
  bool device_only = false;
};

std::span<const ZooClass> zoo_classes();  // one per fault, in fault order
const ZooClass& zoo_class(dispatch::Fault f);

// The first comment line of a zoo regression file (`mxgate zoo --save-regressions`): the fault
// and the minimal case its shrunk case is at most, in the words of docs/bug_classes.md §2.
std::string zoo_regression_comment(dispatch::Fault f);

struct ZooOptions {
  uint64_t seed = 1;           // seeds seed .. seed + seeds - 1
  int seeds = 20;              // for the median
  int cases = 100;             // cap per run: a property that needs more has not detected the fault
  bool all_properties = true;  // discover every property that detects (else only the expected)
  int shrink_starts = 5;       // seeds whose failing case is shrunk; the smallest result is kept
};

struct ZooDetection {
  std::string property;
  std::vector<int> cases;  // per seed: cases until the first failure; 0 = not within the cap
  double median = 0;       // over seeds; +inf when half or more seeds missed
};

struct ZooResult {
  dispatch::Fault fault;
  bool not_applicable = false;  // a device-only class on the host backend (ZooClass)
  std::string not_applicable_reason;
  bool detected = false;
  std::vector<ZooDetection> detections;  // every property that failed on the first seed
  std::string caught_by;                 // the detection with the smallest median
  double median = 0;
  std::string shrunk_by;               // the expected property if it detects, else caught_by
  std::optional<Case> counterexample;  // shrunk, first seed, by shrunk_by
  std::optional<Failure> failure;
  bool minimal = false;  // counterexample satisfies zoo_class(fault).is_minimal
  double seconds = 0;
};

ZooResult run_zoo(dispatch::Fault f, gpu::Backend& be, const ZooOptions& opts);

// The zoo of an implementation with planted faults (docs/plugins.md §7): every property that
// applies to it, run over `opts.seeds` seeds with no zoo fault planted; the fastest detector
// shrinks the counterexample (from several seeds, the smallest kept). `planted`: the
// implementation declares itself wrong on purpose (impl::Implementation::planted_fault: its
// description starts with "planted fault:"), so it must be detected; any other must pass every
// property.
struct ImplZooResult {
  std::string impl;
  bool planted = false;
  bool detected = false;
  std::vector<ZooDetection> detections;
  std::string caught_by;
  double median = 0;
  std::optional<Case> counterexample;
  std::optional<Failure> failure;
  std::optional<uint32_t> tactic;  // the tactic caught_by failed on (an implementation of several)
  double seconds = 0;
  bool ok() const { return planted == detected; }
};
ImplZooResult run_impl_zoo(const impl::Implementation& impl, gpu::Backend& be,
                           const ZooOptions& opts);

// The size of a case for picking the smallest of several shrunk ones: the sum of its numeric
// fields other than the data seed.
uint64_t case_size(const Case& c);

// Median of cases-to-detection (0 entries = missed count as +inf).
double median_cases(std::vector<int> cases);

}  // namespace mxgate::properties
