// Tests for writing .npy files and for files on disk (reference/npy.h; npy_write.cpp,
// npy_read.cpp, npy_array.cpp): serialize/parse round trips, byte-exact writer output, NpyArray's
// typed access, the temporary-file-and-rename writer, read errors naming the path, check_npy, and
// interoperability with the system NumPy (/usr/bin/python3) in both directions.
// Not covered: parsing hand-built and hostile bytes (test_npy_parse.cpp), files larger than
// memory, and the mxgate CLI options that call into this code.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "reference/npy.h"
#include "tests/npy_test_files.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using test_support::Bytes;
using test_support::Contains;
using test_support::to_bytes;

using test_support::TempDir;

Bytes slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void spit(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool numpy_available() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

// Runs a Python script under the system interpreter; true if it exits with status 0.
bool run_python(const TempDir& dir, const std::string& script) {
  const std::string script_path = dir.file("script.py");
  spit(script_path, script);
  const std::string command = "/usr/bin/python3 " + script_path + " " + dir.path().string();
  return std::system(command.c_str()) == 0;
}

// ---------------------------------------------------------------------------------------------
// Round trips and writer output.

// Guards against asymmetries between writer and reader for any dtype or rank.
TEST(NpyRoundTrip, EveryDtypeAndSeveralRanks) {
  const std::vector<std::vector<size_t>> shapes = {{}, {0}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 4}};
  std::mt19937 rng(7);
  for (const auto& shape : shapes) {
    const size_t n = npy_element_count(shape);
    std::vector<uint8_t> u8(n);
    std::vector<uint16_t> u16(n);
    std::vector<float> f32(n);
    std::vector<double> f64(n);
    for (size_t i = 0; i < n; ++i) {
      u8[i] = uint8_t(rng());
      u16[i] = uint16_t(rng());
      f32[i] = std::bit_cast<float>(uint32_t(rng()));  // any bit pattern, NaNs included
      f64[i] = std::bit_cast<double>(uint64_t(rng()) << 32 | rng());
    }
    for (const NpyArray& a :
         {NpyArray(shape, u8), NpyArray(shape, u16), NpyArray(shape, f32), NpyArray(shape, f64)}) {
      const Bytes file = serialize_npy(a);
      const NpyArray back = parse_npy(file);
      EXPECT_EQ(back, a) << npy_dtype_name(a.dtype) << " " << npy_shape_string(shape);
      const size_t data_start = file.size() - a.bytes.size();
      EXPECT_EQ(data_start % 64, 0u) << "data must start 64-byte aligned";
      EXPECT_EQ(file[data_start - 1], '\n');
      EXPECT_EQ(file[6], 1) << "small headers are written as version 1.0";
    }
  }
}

// Guards against a writer that differs from np.save by even one byte.
TEST(NpyWrite, Float32MatrixIsByteExact) {
  const NpyArray a({2, 3}, std::vector<float>{0, 1, 2, 3, 4, 5});
  // Derived from numpy.lib.format: the dict is 59 chars; np.save adds 21 - len("2") = 20 spare
  // spaces so the first extent can grow, then pads so that 10 preamble bytes + header are a
  // multiple of 64: 10 + 59 + 20 + 1 ('\n') = 90 -> 128, i.e. 38 more spaces. Header size
  // 118 = 0x76.
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                         std::string(20 + 38, ' ') + "\n";
  // 0, 1, 2, 3, 4, 5 as float32: 0, 0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000.
  expected += std::string("\0\0\0\0\0\0\x80\x3f\0\0\0\x40\0\0\x40\x40\0\0\x80\x40\0\0\xa0\x40", 24);
  EXPECT_EQ(serialize_npy(a), to_bytes(expected));
}

// Guards against overflowing the 2-byte size field: huge headers must switch to version 2.0.
TEST(NpyWrite, LargeHeaderUsesVersion2) {
  const NpyArray a(std::vector<size_t>(30000, 1), std::vector<uint8_t>{9});
  const Bytes file = serialize_npy(a);
  EXPECT_EQ(file[6], 2);
  EXPECT_EQ((file.size() - 1) % 64, 0u) << "header must end on a 64-byte boundary";
  EXPECT_EQ(parse_npy(file), a);
}

// Guards against serializing an array whose bytes do not match its shape.
TEST(NpyWrite, InconsistentArrayIsRejected) {
  NpyArray a({2, 2}, std::vector<float>{1, 2, 3, 4});
  a.bytes.pop_back();
  try {
    serialize_npy(a);
    ADD_FAILURE() << "serialize_npy accepted an inconsistent array";
  } catch (const NpyError& e) {
    EXPECT_TRUE(Contains(e.what(), "float32 (2, 2) needs 16 bytes, holds 15"));
  }
  EXPECT_THROW(NpyArray({2, 2}, std::vector<float>{1, 2, 3}), NpyError);
  EXPECT_THROW(NpyArray::from_bytes(NpyDtype::kUint16, {3}, {1, 2, 3}), NpyError);
}

// Guards against reinterpreting an array as the wrong element type.
TEST(NpyArrayTest, TypedAccessRequiresMatchingDtype) {
  const NpyArray a({2}, std::vector<uint16_t>{1, 2});
  EXPECT_EQ(a.values<uint16_t>(), (std::vector<uint16_t>{1, 2}));
  EXPECT_THROW(a.values<float>(), NpyError);
  EXPECT_THROW(a.values<uint8_t>(), NpyError);
  EXPECT_EQ(NpyArray().size(), 0u) << "a default array is an empty (0,) array";
}

// ---------------------------------------------------------------------------------------------
// Files.

// Guards against losing data: write_npy goes through a temporary file and leaves nothing behind.
TEST(NpyFiles, WriteThenReadAndNoLeftovers) {
  TempDir dir;
  const std::string path = dir.file("a.npy");
  const NpyArray first({3}, std::vector<uint8_t>{1, 2, 3});
  const NpyArray second({2}, std::vector<double>{-1, 1});
  write_npy(path, first);
  EXPECT_EQ(read_npy(path), first);
  write_npy(path, second);  // replaces the existing file
  EXPECT_EQ(read_npy(path), second);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

// Guards against a failed write destroying the existing file or leaving a temporary behind.
TEST(NpyFiles, FailedWriteKeepsExistingData) {
  TempDir dir;
  const std::string path = dir.file("keep.npy");
  const NpyArray good({2}, std::vector<float>{1, 2});
  write_npy(path, good);
  const Bytes before = slurp(path);

  NpyArray broken = good;
  broken.bytes.push_back(0);
  EXPECT_THROW(write_npy(path, broken), NpyError);
  EXPECT_EQ(slurp(path), before);

  // Renaming a file over a directory fails after the temporary file is fully written.
  const std::string directory = dir.file("is_a_dir.npy");
  std::filesystem::create_directory(directory);
  try {
    write_npy(directory, good);
    ADD_FAILURE() << "write_npy replaced a directory";
  } catch (const NpyError& e) {
    EXPECT_TRUE(Contains(e.what(), directory));
    EXPECT_TRUE(Contains(e.what(), "rename"));
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 2)
      << "only keep.npy and the directory remain";
}

// Guards against uninformative I/O errors: messages name the path and the system's reason.
TEST(NpyFiles, OpenErrorsNamePathAndReason) {
  TempDir dir;
  const std::string missing = dir.file("missing.npy");
  try {
    read_npy(missing);
    ADD_FAILURE() << "read_npy opened a missing file";
  } catch (const NpyError& e) {
    EXPECT_TRUE(Contains(e.what(), "cannot open '" + missing + "'"));
    EXPECT_TRUE(Contains(e.what(), "No such file or directory"));
  }
  try {
    read_npy(dir.path().string());
    ADD_FAILURE() << "read_npy read a directory";
  } catch (const NpyError& e) {
    EXPECT_TRUE(Contains(e.what(), "Is a directory"));
  }
  const std::string nowhere = dir.file("no_such_dir/out.npy");
  try {
    write_npy(nowhere, NpyArray({1}, std::vector<uint8_t>{1}));
    ADD_FAILURE() << "write_npy wrote into a missing directory";
  } catch (const NpyError& e) {
    EXPECT_TRUE(Contains(e.what(), "cannot write '" + nowhere + "'"));
    EXPECT_TRUE(Contains(e.what(), "No such file or directory"));
  }
}

// Guards against parse errors from files that do not say which file was bad.
TEST(NpyFiles, ParseErrorsNameThePath) {
  TempDir dir;
  const std::string path = dir.file("bad.npy");
  spit(path, "not an npy file");
  try {
    read_npy(path);
    ADD_FAILURE() << "read_npy accepted a text file";
  } catch (const NpyError& e) {
    EXPECT_TRUE(Contains(e.what(), path + ": bad magic"));
  }
}

// ---------------------------------------------------------------------------------------------
// check_npy.

// Guards against accepting a wrong input silently, and against messages that hide which input.
TEST(NpyCheck, NamesRoleExpectedAndActual) {
  const NpyArray f32({3}, std::vector<float>{1, 2, 3});
  try {
    check_npy(f32, "--a", NpyDtype::kUint8, {"M", "K"});
    ADD_FAILURE() << "check_npy accepted a float32 vector";
  } catch (const NpyError& e) {
    EXPECT_STREQ(e.what(), "--a: expected uint8 (M, K), got float32 (3,)");
  }
  const NpyArray u8({4, 32}, std::vector<uint8_t>(128));
  EXPECT_NO_THROW(check_npy(u8, "--a", NpyDtype::kUint8, {"M", "K"}));
  EXPECT_NO_THROW(check_npy(u8, "--a", NpyDtype::kUint8, {"M", NpyDim("K", 32)}));
  EXPECT_NO_THROW(check_npy(u8, "--a", NpyDtype::kUint8, {4, 32}));
  try {
    check_npy(u8, "--scales", NpyDtype::kUint8, {"M", NpyDim("K", 64)});
    ADD_FAILURE() << "check_npy accepted a wrong fixed extent";
  } catch (const NpyError& e) {
    EXPECT_STREQ(e.what(), "--scales: expected uint8 (M, K=64), got uint8 (4, 32)");
  }
  try {
    check_npy(u8, "--n", NpyDtype::kUint8, {});
    ADD_FAILURE() << "check_npy accepted a matrix as a scalar";
  } catch (const NpyError& e) {
    EXPECT_STREQ(e.what(), "--n: expected uint8 (), got uint8 (4, 32)");
  }
  try {
    check_npy(u8, "--v", NpyDtype::kUint8, {"N"});
    ADD_FAILURE() << "check_npy accepted a matrix as a vector";
  } catch (const NpyError& e) {
    EXPECT_STREQ(e.what(), "--v: expected uint8 (N,), got uint8 (4, 32)");
  }
}

// ---------------------------------------------------------------------------------------------
// NumPy interoperability.

// Guards against files from real NumPy (np.save, format 2.0 and 3.0) being misread, and against
// our writer differing from np.save for the same array.
TEST(NpyNumpy, ReadsWhatNumpyWrites) {
  if (!numpy_available()) {
    GTEST_SKIP() << "/usr/bin/python3 with numpy not available";
  }
  TempDir dir;
  ASSERT_TRUE(run_python(dir, R"(
import sys, numpy as np
from numpy.lib import format as fmt
d = sys.argv[1]
np.save(d + '/u8.npy', np.arange(12, dtype=np.uint8).reshape(3, 4))
np.save(d + '/u16.npy', np.array([0, 1, 0x1234, 65535], dtype='<u2'))
np.save(d + '/f32.npy', np.array([[1.5, -2.0, 0.1], [np.inf, -0.0, 3.4028235e38]], np.float32))
np.save(d + '/f64.npy', np.array([np.pi, -1e300, 5e-324]))
np.save(d + '/scalar.npy', np.float64(2.5))
np.save(d + '/empty.npy', np.zeros((0, 5), np.float32))
np.save(d + '/rank4.npy', np.arange(6, dtype=np.uint16).reshape(1, 2, 1, 3))
for version in [(2, 0), (3, 0)]:
    with open(d + '/v%d.npy' % version[0], 'wb') as f:
        fmt.write_array(f, np.array([7, 8], np.uint16), version=version)
np.save(d + '/fortran.npy', np.asfortranarray(np.arange(6.0).reshape(2, 3)))
np.save(d + '/bigendian.npy', np.arange(3, dtype='>f4'))
np.save(d + '/int16.npy', np.arange(3, dtype=np.int16))
np.save(d + '/i32.npy', np.array([0, -1, 2**31 - 1], np.int32))
np.save(d + '/i64.npy', np.array([[-2**63, 5]], np.int64))
)"));
  const auto read = [&](const char* name) { return read_npy(dir.file(name)); };

  EXPECT_EQ(read("u8.npy"),
            NpyArray({3, 4}, std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(read("u16.npy"), NpyArray({4}, std::vector<uint16_t>{0, 1, 0x1234, 65535}));
  EXPECT_EQ(
      read("f32.npy"),
      NpyArray({2, 3}, std::vector<float>{1.5f, -2.0f, 0.1f, std::numeric_limits<float>::infinity(),
                                          -0.0f, 3.4028235e38f}));
  EXPECT_EQ(read("f64.npy"), NpyArray({3}, std::vector<double>{3.141592653589793, -1e300, 5e-324}));
  EXPECT_EQ(read("scalar.npy"), NpyArray({}, std::vector<double>{2.5}));
  EXPECT_EQ(read("empty.npy"), NpyArray({0, 5}, std::vector<float>{}));
  EXPECT_EQ(read("rank4.npy"), NpyArray({1, 2, 1, 3}, std::vector<uint16_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(read("v2.npy"), NpyArray({2}, std::vector<uint16_t>{7, 8}));
  EXPECT_EQ(read("v3.npy"), NpyArray({2}, std::vector<uint16_t>{7, 8}));
  // Index arrays (group offsets): int32 and int64, extremes included.
  const std::vector<int32_t> i32 = {0, -1, 2147483647};
  EXPECT_EQ(read("i32.npy"), NpyArray::from<int32_t>({3}, i32));
  const std::vector<int64_t> i64 = {std::numeric_limits<int64_t>::min(), 5};
  EXPECT_EQ(read("i64.npy"), NpyArray::from<int64_t>({1, 2}, i64));

  // Re-serializing what np.save wrote must give back the same bytes.
  for (const char* name : {"u8.npy", "u16.npy", "f32.npy", "f64.npy", "scalar.npy", "empty.npy",
                           "rank4.npy", "i32.npy", "i64.npy"}) {
    EXPECT_EQ(serialize_npy(read(name)), slurp(dir.file(name))) << name;
  }

  const auto error = [&](const char* name) -> std::string {
    try {
      read(name);
    } catch (const NpyError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_TRUE(Contains(error("fortran.npy"), "Fortran order is not supported"));
  EXPECT_TRUE(Contains(error("bigendian.npy"), "big-endian dtype '>f4'"));
  EXPECT_TRUE(Contains(error("int16.npy"), "unsupported dtype '<i2'"));
}

// Guards against files that NumPy cannot load or loads with different dtype, shape or values.
TEST(NpyNumpy, NumpyReadsWhatWeWrite) {
  if (!numpy_available()) {
    GTEST_SKIP() << "/usr/bin/python3 with numpy not available";
  }
  TempDir dir;
  write_npy(dir.file("u8.npy"), NpyArray({2, 2}, std::vector<uint8_t>{0, 1, 254, 255}));
  write_npy(dir.file("u16.npy"), NpyArray({3}, std::vector<uint16_t>{0, 0x1234, 65535}));
  write_npy(dir.file("f32.npy"),
            NpyArray({1, 3}, std::vector<float>{1.5f, -0.0f, std::numeric_limits<float>::max()}));
  write_npy(dir.file("f64.npy"), NpyArray({}, std::vector<double>{-2.5}));
  write_npy(dir.file("empty.npy"), NpyArray({3, 0}, std::vector<float>{}));
  write_npy(dir.file("big.npy"), NpyArray({2, 1, 2, 1}, std::vector<double>{1, 2, 3, 1e-300}));
  EXPECT_TRUE(run_python(dir, R"(
import sys, numpy as np
d = sys.argv[1]
expected = {
    'u8': np.array([[0, 1], [254, 255]], np.uint8),
    'u16': np.array([0, 0x1234, 65535], np.uint16),
    'f32': np.array([[1.5, -0.0, np.finfo(np.float32).max]], np.float32),
    'f64': np.array(-2.5),
    'empty': np.zeros((3, 0), np.float32),
    'big': np.array([1, 2, 3, 1e-300]).reshape(2, 1, 2, 1),
}
ok = True
for name, want in expected.items():
    got = np.load('%s/%s.npy' % (d, name), allow_pickle=False)
    if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
        print('mismatch in %s: got %r %r %r' % (name, got.dtype, got.shape, got))
        ok = False
sys.exit(0 if ok else 1)
)"));
}

}  // namespace
}  // namespace mxgate
