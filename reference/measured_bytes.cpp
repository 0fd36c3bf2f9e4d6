#include "reference/measured_bytes.h"

#include <array>
#include <limits>

namespace mxgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kFltMax = 0x1.fffffep+127f;

// docs/conventions.md §3.1 "probe.cu" table: value | e4m3 SAT NOSAT | e5m2 SAT NOSAT || e8m0 RZsat
// RZnosat RPsat RPnosat. One array per column, in row order.
constexpr std::array<float, 31> kProbeInputs = {
    0x0p+0f,       -0x0p+0f,   0x1.b7cdfep-34f, 0x1p-10f,       0x1.0001p-10f,
    0x1p-9f,       0x1.cp+8f,  0x1.dp+8f,       0x1.d00002p+8f, 0x1.d6p+8f,
    0x1.ep+8f,     0x1.cp+15f, 0x1.dffep+15f,   0x1.ep+15f,     kInf,
    -kInf,         kNaN,       -0x1.d6p+8f,     1.0f,           1.5f,
    3.0f,          0.75f,      -1.0f,           0x1p-127f,      0x1.2p-127f,
    0x1.8p-127f,   0x1p-128f,  0x1p-149f,       0x1.8p+127f,    kFltMax,
    0x1.000002p+0f};
constexpr std::array<uint8_t, 31> kProbeE4m3Sat = {
    0x00, 0x80, 0x00, 0x00, 0x01, 0x01, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0xfe,
    0x7f, 0xfe, 0x38, 0x3c, 0x44, 0x34, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7e, 0x7e, 0x38};
constexpr std::array<uint8_t, 31> kProbeE4m3NoSat = {
    0x00, 0x80, 0x00, 0x00, 0x01, 0x01, 0x7e, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0xff,
    0x7f, 0xff, 0x38, 0x3c, 0x44, 0x34, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x7f, 0x38};
constexpr std::array<uint8_t, 31> kProbeE5m2Sat = {
    0x00, 0x80, 0x00, 0x14, 0x14, 0x18, 0x5f, 0x5f, 0x5f, 0x5f, 0x60, 0x7b, 0x7b, 0x7b, 0x7b, 0xfb,
    0x7f, 0xdf, 0x3c, 0x3e, 0x42, 0x3a, 0xbc, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7b, 0x7b, 0x3c};
constexpr std::array<uint8_t, 31> kProbeE5m2NoSat = {
    0x00, 0x80, 0x00, 0x14, 0x14, 0x18, 0x5f, 0x5f, 0x5f, 0x5f, 0x60, 0x7b, 0x7b, 0x7c, 0x7c, 0xfc,
    0x7f, 0xdf, 0x3c, 0x3e, 0x42, 0x3a, 0xbc, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7c, 0x7c, 0x3c};
constexpr std::array<uint8_t, 31> kProbeE8m0RzSat = {
    0x00, 0x00, 0x5d, 0x75, 0x75, 0x76, 0x87, 0x87, 0x87, 0x87, 0x87, 0x8e, 0x8e, 0x8e, 0xfe, 0xfe,
    0xff, 0x87, 0x7f, 0x7f, 0x80, 0x7e, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0xfe, 0xfe, 0x7f};
constexpr std::array<uint8_t, 31> kProbeE8m0RzNoSat = {
    0x00, 0x00, 0x5d, 0x75, 0x75, 0x76, 0x87, 0x87, 0x87, 0x87, 0x87, 0x8e, 0x8e, 0x8e, 0xff, 0xff,
    0xff, 0x87, 0x7f, 0x7f, 0x80, 0x7e, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0xfe, 0xfe, 0x7f};
constexpr std::array<uint8_t, 31> kProbeE8m0RpSat = {
    0x00, 0x00, 0x5e, 0x75, 0x76, 0x76, 0x88, 0x88, 0x88, 0x88, 0x88, 0x8f, 0x8f, 0x8f, 0xfe, 0xfe,
    0xff, 0x88, 0x7f, 0x80, 0x81, 0x7f, 0x7f, 0x00, 0x01, 0x01, 0x00, 0x00, 0xfe, 0xfe, 0x80};
constexpr std::array<uint8_t, 31> kProbeE8m0RpNoSat = {
    0x00, 0x00, 0x5e, 0x75, 0x76, 0x76, 0x88, 0x88, 0x88, 0x88, 0x88, 0x8f, 0x8f, 0x8f, 0xff, 0xff,
    0xff, 0x88, 0x7f, 0x80, 0x81, 0x7f, 0x7f, 0x00, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0x80};

// docs/conventions.md §3.2 "torch 2.11.0+cu130" value list, as fp32 (Python doubles rounded by
// torch.tensor(..., dtype=float32)): 1e-10 = 0x1.b7cdfep-34, 2^-10*1.0001 = 0x1.00068ep-10,
// 464.0001 = 0x1.d00006p+8, 479.9 = 0x1.dfe666p+8. The last four entries differ per format.
#define MXGATE_TORCH_HEAD                                                           \
  0.0f, -0.0f, 0x1.b7cdfep-34f, 0x1p-10f, 0x1.00068ep-10f, 0x1p-9f, 448.0f, 464.0f, \
      0x1.d00006p+8f, 470.0f, 0x1.dfe666p+8f, 480.0f, 500.0f, 1e6f, kInf, -kInf, kNaN, -470.0f
constexpr std::array<float, 22> kTorchE4m3Inputs = {MXGATE_TORCH_HEAD, 240.0f, 247.0f, 248.0f,
                                                    256.0f};
constexpr std::array<float, 22> kTorchE5m2Inputs = {MXGATE_TORCH_HEAD, 57344.0f, 61439.0f, 61440.0f,
                                                    65536.0f};
#undef MXGATE_TORCH_HEAD
constexpr std::array<uint8_t, 22> kTorchE4m3fn = {0x00, 0x80, 0x00, 0x00, 0x01, 0x01, 0x7e, 0x7e,
                                                  0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0xff,
                                                  0x7f, 0xff, 0x77, 0x77, 0x78, 0x78};
constexpr std::array<uint8_t, 22> kTorchE5m2 = {0x00, 0x80, 0x00, 0x14, 0x14, 0x18, 0x5f, 0x5f,
                                                0x5f, 0x5f, 0x5f, 0x60, 0x60, 0x7c, 0x7c, 0xfc,
                                                0x7f, 0xdf, 0x7b, 0x7b, 0x7c, 0x7c};
constexpr std::array<uint8_t, 22> kTorchE4m3fnuz = {0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x80, 0x80,
                                                    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                                    0x80, 0x80, 0x7f, 0x7f, 0x80, 0x80};
constexpr std::array<uint8_t, 22> kTorchE5m2fnuz = {0x00, 0x00, 0x00, 0x18, 0x18, 0x1c, 0x63, 0x63,
                                                    0x63, 0x63, 0x63, 0x64, 0x64, 0x80, 0x80, 0x80,
                                                    0x80, 0xe3, 0x7f, 0x7f, 0x80, 0x80};
// Triton rows: the printed bytes of the last four entries (7e / 7b) show that both rows used
// the e5m2 tail (57344, 61439, 61440, 65536); with the e4m3 tail 240 would give 0x77.
constexpr std::array<uint8_t, 22> kTritonE4m3 = {0x00, 0x80, 0x00, 0x00, 0x01, 0x01, 0x7e, 0x7e,
                                                 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0xfe,
                                                 0x7f, 0xfe, 0x7e, 0x7e, 0x7e, 0x7e};
constexpr std::array<uint8_t, 22> kTritonE5m2 = {0x00, 0x80, 0x00, 0x14, 0x14, 0x18, 0x5f, 0x5f,
                                                 0x5f, 0x5f, 0x5f, 0x60, 0x60, 0x7b, 0x7b, 0xfb,
                                                 0x7f, 0xdf, 0x7b, 0x7b, 0x7b, 0x7b};

// docs/conventions.md §3.4 "e8m0 vals" list, as fp32: 1.5000001 = 0x1.800002p+0, 1.4999999 =
// 0x1.7ffffep+0, 1.2*2^-127 = 0x1.333334p-127, 1.6*2^-127 = 0x1.999998p-127, 3e38 =
// 0x1.c363ccp+127.
constexpr std::array<float, 22> kE8m0Inputs = {0.0f,           -0.0f,
                                               1.0f,           1.5f,
                                               0x1.800002p+0f, 0x1.7ffffep+0f,
                                               3.0f,           0.75f,
                                               -1.0f,          -3.0f,
                                               0x1p-127f,      0x1.333334p-127f,
                                               0x1.8p-127f,    0x1.999998p-127f,
                                               0x1p-128f,      0x1p-149f,
                                               0x1.8p+127f,    0x1.c363ccp+127f,
                                               kFltMax,        kInf,
                                               -kInf,          kNaN};
constexpr std::array<uint8_t, 22> kTorchE8m0 = {0x00, 0x00, 0x7f, 0x80, 0x80, 0x7f, 0x81, 0x7f,
                                                0x7f, 0x81, 0x00, 0x01, 0x01, 0x01, 0x00, 0x00,
                                                0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
constexpr std::array<uint8_t, 22> kMlDtypesE8m0 = {0xff, 0xff, 0x7f, 0x80, 0x80, 0x7f, 0x81, 0x7f,
                                                   0xff, 0xff, 0x00, 0x01, 0x01, 0x01, 0x00, 0x00,
                                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// docs/conventions.md §3.5 "e8m0 bytes [00,01,7e,7f,80,fe,ff] -> f32".
constexpr std::array<uint8_t, 7> kDecodeBytes = {0x00, 0x01, 0x7e, 0x7f, 0x80, 0xfe, 0xff};
constexpr std::array<uint32_t, 7> kDecodeTorch = {0x00400000, 0x00800000, 0x3f000000, 0x3f800000,
                                                  0x40000000, 0x7f000000, 0x7fc00000};
constexpr std::array<uint32_t, 7> kDecodeExp2Cuda = {0x003fffff, 0x00800000, 0x3f000000, 0x3f800000,
                                                     0x40000000, 0x7f000000, 0x7f800000};
constexpr std::array<uint32_t, 7> kDecodeShift = {0x00000000, 0x00800000, 0x3f000000, 0x3f800000,
                                                  0x40000000, 0x7f000000, 0x7f800000};

const std::array<MeasuredEncode, 10> kEncodes = {{
    {"cuda_satfinite", Format::kE4M3FN, "probe.cu e4m3 SAT", kProbeInputs, kProbeE4m3Sat},
    {"cuda_nosat", Format::kE4M3FN, "probe.cu e4m3 NOSAT", kProbeInputs, kProbeE4m3NoSat},
    {"cuda_satfinite", Format::kE5M2, "probe.cu e5m2 SAT", kProbeInputs, kProbeE5m2Sat},
    {"cuda_nosat", Format::kE5M2, "probe.cu e5m2 NOSAT", kProbeInputs, kProbeE5m2NoSat},
    {"torch_2_11", Format::kE4M3FN, "torch 2.11 e4m3fn f32->", kTorchE4m3Inputs, kTorchE4m3fn},
    {"torch_2_11", Format::kE5M2, "torch 2.11 e5m2 f32->", kTorchE5m2Inputs, kTorchE5m2},
    {"torch_2_11", Format::kE4M3FNUZ, "torch 2.11 e4m3fnuz f32->", kTorchE4m3Inputs,
     kTorchE4m3fnuz},
    {"torch_2_11", Format::kE5M2FNUZ, "torch 2.11 e5m2fnuz f32->", kTorchE5m2Inputs,
     kTorchE5m2fnuz},
    {"triton_nvidia", Format::kE4M3FN, "triton 3.6 f32->fp8e4nv", kTorchE5m2Inputs, kTritonE4m3},
    {"triton_nvidia", Format::kE5M2, "triton 3.6 f32->fp8e5", kTorchE5m2Inputs, kTritonE5m2},
}};

const std::array<MeasuredE8m0, 6> kE8m0Encodes = {{
    {E8m0Encode::kFloorSat, "probe.cu e8m0 RZsat", kProbeInputs, kProbeE8m0RzSat},
    {E8m0Encode::kFloor, "probe.cu e8m0 RZnosat", kProbeInputs, kProbeE8m0RzNoSat},
    {E8m0Encode::kCeilSat, "probe.cu e8m0 RPsat (and host RPsat)", kProbeInputs, kProbeE8m0RpSat},
    {E8m0Encode::kCeilNoSat, "probe.cu e8m0 RPnosat", kProbeInputs, kProbeE8m0RpNoSat},
    {E8m0Encode::kNearestTorch, "torch f32->e8m0", kE8m0Inputs, kTorchE8m0},
    {E8m0Encode::kNearestMlDtypes, "ml_dtypes 0.6.0 f32->e8m0", kE8m0Inputs, kMlDtypesE8m0},
}};

const std::array<MeasuredE8m0Decode, 3> kE8m0Decodes = {{
    {"torch_2_11", E8m0Decode::kOcp, "torch (cpu/cuda) e8m0 -> f32", kDecodeBytes, kDecodeTorch},
    {"vllm_mxfp8_exp2", E8m0Decode::kExp2Cuda, "torch.exp2(e-127) on CUDA", kDecodeBytes,
     kDecodeExp2Cuda},
    {"vllm_e8m0_shift", E8m0Decode::kShift, "(e.int32 << 23).view(f32)", kDecodeBytes,
     kDecodeShift},
}};

}  // namespace

std::span<const MeasuredEncode> measured_encodes() { return kEncodes; }
std::span<const MeasuredE8m0> measured_e8m0_encodes() { return kE8m0Encodes; }
std::span<const MeasuredE8m0Decode> measured_e8m0_decodes() { return kE8m0Decodes; }

}  // namespace mxgate
