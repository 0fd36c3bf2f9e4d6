// Test helper for typed tests over format traits (test_format.cpp, test_fp_encode.cpp): each
// instantiation is named by its trait's kName ("e4m3fn", ...) rather than by a number, so a
// failure names the format.
#pragma once

#include <string>

namespace mxgate::test_support {

class TraitNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};

}  // namespace mxgate::test_support
