// One visitor out of several lambdas for std::visit: each alternative (or pair of alternatives)
// picks the lambda that takes it.
#pragma once

namespace mxgate {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace mxgate
