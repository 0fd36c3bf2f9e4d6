// Tests for reference/npy.h: parsing hand-built .npy files (versions 1.0, 2.0, 3.0, every dtype,
// scalar and zero-size shapes, unusual header spelling), every error path and its message,
// serialize/parse round trips, byte-exact writer output, truncated and mutated files, the
// temporary-file-and-rename writer, check_npy, and interoperability with the system NumPy
// (/usr/bin/python3) in both directions.
// Not covered: big-endian hosts (npy.cpp refuses to compile there), files larger than memory,
// non-ASCII header text, and the mxgate CLI options that call into this code.
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
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }

// A .npy file assembled by hand from the spec: magic, version, little-endian header size (2 bytes
// for 1.0, 4 bytes for 2.0 and 3.0), header text, data. No alignment padding: readers must not
// require it, and leaving it out keeps the headers in these tests readable.
Bytes npy_file(uint8_t major, std::string_view header, std::string_view data) {
  Bytes out = to_bytes("\x93NUMPY");
  out.push_back(major);
  out.push_back(0);
  const size_t length_size = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_size; ++i) {
    out.push_back(uint8_t(header.size() >> (8 * i)));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// The message of the NpyError that parse_npy throws; any other outcome fails the test.
std::string parse_error(const Bytes& file) {
  try {
    parse_npy(file);
  } catch (const NpyError& e) {
    return e.what();
  }
  ADD_FAILURE() << "parse_npy accepted the input";
  return "";
}

testing::AssertionResult Contains(const std::string& message, std::string_view phrase) {
  if (message.find(phrase) != std::string::npos) {
    return testing::AssertionSuccess();
  }
  return testing::AssertionFailure() << "\"" << message << "\" lacks \"" << phrase << "\"";
}

std::string header_for(std::string_view descr, std::string_view shape) {
  return "{'descr': '" + std::string(descr) +
         "', 'fortran_order': False, 'shape': " + std::string(shape) + ", }\n";
}

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
// Hand-built valid files.

// Guards against misreading the 1.0 preamble or the '|u1' descr np.save writes for uint8.
TEST(NpyParse, Version1Uint8Vector) {
  const NpyArray a = parse_npy(npy_file(1, header_for("|u1", "(3,)"), "\x01\x02\xff"));
  EXPECT_EQ(a.dtype, NpyDtype::kUint8);
  EXPECT_EQ(a.shape, (std::vector<size_t>{3}));
  EXPECT_EQ(a.values<uint8_t>(), (std::vector<uint8_t>{1, 2, 255}));
}

// Guards against rejecting '<u1', which NumPy itself accepts for uint8.
TEST(NpyParse, Uint8WithLittleEndianDescr) {
  const NpyArray a =
      parse_npy(npy_file(1, header_for("<u1", "(2,)"), std::string_view("\x07\x00", 2)));
  EXPECT_EQ(a.values<uint8_t>(), (std::vector<uint8_t>{7, 0}));
}

// Guards against reading uint16 big-endian: bytes 34 12 are 0x1234.
TEST(NpyParse, Uint16LittleEndian) {
  const NpyArray a = parse_npy(npy_file(1, header_for("<u2", "(2,)"), "\x34\x12\xff\xff"));
  EXPECT_EQ(a.dtype, NpyDtype::kUint16);
  EXPECT_EQ(a.values<uint16_t>(), (std::vector<uint16_t>{0x1234, 0xffff}));
}

// Guards against wrong float32 decoding or row-major order in a 2-D array.
TEST(NpyParse, Float32Matrix) {
  // 1.5f = 0x3fc00000, -2.0f = 0xc0000000, 0.0f = 0, +inf = 0x7f800000; little-endian, C order.
  const NpyArray a = parse_npy(npy_file(1, header_for("<f4", "(2, 2)"),
                                        std::string_view("\x00\x00\xc0\x3f"
                                                         "\x00\x00\x00\xc0"
                                                         "\x00\x00\x00\x00"
                                                         "\x00\x00\x80\x7f",
                                                         16)));
  EXPECT_EQ(a.shape, (std::vector<size_t>{2, 2}));
  EXPECT_EQ(a.values<float>(),
            (std::vector<float>{1.5f, -2.0f, 0.0f, std::numeric_limits<float>::infinity()}));
}

// Guards against wrong float64 decoding.
TEST(NpyParse, Float64Vector) {
  // 1.0 = 0x3ff0000000000000, -2.0 = 0xc000000000000000.
  const NpyArray a =
      parse_npy(npy_file(1, header_for("<f8", "(2,)"),
                         std::string_view("\0\0\0\0\0\0\xf0\x3f\0\0\0\0\0\0\0\xc0", 16)));
  EXPECT_EQ(a.dtype, NpyDtype::kFloat64);
  EXPECT_EQ(a.values<double>(), (std::vector<double>{1.0, -2.0}));
}

// Guards against reading the 2.0 header size as 2 bytes instead of 4.
TEST(NpyParse, Version2Header) {
  const NpyArray a = parse_npy(npy_file(2, header_for("<u2", "(1,)"), "\x01\x02"));
  EXPECT_EQ(a.values<uint16_t>(), (std::vector<uint16_t>{0x0201}));
}

// Guards against rejecting version 3.0 (2.0 with a utf-8 header), which NumPy writes for
// non-latin-1 headers.
TEST(NpyParse, Version3Header) {
  const NpyArray a = parse_npy(npy_file(3, header_for("|u1", "(1,)"), "\x2a"));
  EXPECT_EQ(a.values<uint8_t>(), (std::vector<uint8_t>{42}));
}

// Guards against treating shape () as empty: a 0-d array holds exactly one element.
TEST(NpyParse, ScalarShape) {
  // 2.5 = 0x4004000000000000.
  const NpyArray a =
      parse_npy(npy_file(1, header_for("<f8", "()"), std::string_view("\0\0\0\0\0\0\x04\x40", 8)));
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(a.values<double>(), (std::vector<double>{2.5}));
}

// Guards against rejecting zero-size arrays, which have no data bytes at all.
TEST(NpyParse, ZeroSizeArrays) {
  for (const char* shape : {"(0,)", "(0, 5)", "(5, 0)", "(2, 0, 3)"}) {
    const NpyArray a = parse_npy(npy_file(1, header_for("<f4", shape), ""));
    EXPECT_EQ(a.size(), 0u) << shape;
    EXPECT_TRUE(a.bytes.empty()) << shape;
  }
}

// Guards against substring matching: any key order, either quote, odd whitespace and commas.
TEST(NpyParse, HeaderSpellingVariants) {
  const char* headers[] = {
      "{\"shape\" :( 2 ,3 ) ,\t\"fortran_order\":False,'descr' : \"<u2\"}\n",
      "  {'fortran_order': False,\n 'descr': '<u2',\n 'shape': (2, 3,),\n}  \n",
      "{'descr':'<u2','shape':(2,3),'fortran_order':False}",
      "{u'descr': u'<u2', 'fortran_order': False, 'shape': (2L, 3L), }\n",  // as Python 2 wrote
  };
  for (const char* header : headers) {
    const NpyArray a = parse_npy(npy_file(1, header, std::string(12, '\x01')));
    EXPECT_EQ(a.dtype, NpyDtype::kUint16) << header;
    EXPECT_EQ(a.shape, (std::vector<size_t>{2, 3})) << header;
  }
}

// Guards against misreading a padded, aligned header exactly as np.save wrote it.
TEST(NpyParse, NumpyAlignedHeader) {
  // np.save(f, np.array([258], dtype='<u2')): the dict is 57 chars, then 21 - len("1") = 20 spare
  // spaces, then 40 spaces so that 10 preamble bytes + header = 128, then '\n'. Header size
  // 57 + 60 + 1 = 118 = 0x76. Data: 258 = 0x0102, little-endian.
  const std::string file = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                           "{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }" +
                           std::string(20 + 40, ' ') + "\n\x02\x01";
  ASSERT_EQ(file.size(), 130u);
  const NpyArray a = parse_npy(to_bytes(file));
  EXPECT_EQ(a.values<uint16_t>(), (std::vector<uint16_t>{0x0102}));
}

// ---------------------------------------------------------------------------------------------
// Error paths: each must throw NpyError with a message that names the problem.

// Guards against accepting non-.npy input (e.g. an .npz zip) or failing on empty input.
TEST(NpyErrors, BadMagic) {
  EXPECT_TRUE(Contains(parse_error(to_bytes("PK\x03\x04 not npy")), "bad magic"));
  EXPECT_TRUE(Contains(parse_error(to_bytes("\x93NUMPZ")), "bad magic"));
  EXPECT_TRUE(Contains(parse_error(to_bytes("\x93N")), "truncated preamble"));
  Bytes wrong = npy_file(1, header_for("|u1", "(1,)"), "\x2a");
  wrong[5] = 'Z';
  EXPECT_TRUE(Contains(parse_error(wrong), "bad magic"));
  EXPECT_TRUE(Contains(parse_error({}), "truncated preamble"));
}

// Guards against guessing at the layout of unknown format versions.
TEST(NpyErrors, UnsupportedVersion) {
  Bytes file = npy_file(1, header_for("|u1", "(1,)"), "\x2a");
  file[6] = 4;
  EXPECT_TRUE(Contains(parse_error(file), "unsupported .npy format version 4.0"));
  file[6] = 1;
  file[7] = 1;
  EXPECT_TRUE(Contains(parse_error(file), "unsupported .npy format version 1.1"));
}

// Guards against reading past the buffer when the declared header size exceeds the file.
TEST(NpyErrors, TruncatedHeader) {
  Bytes file = npy_file(1, header_for("|u1", "(1,)"), "");
  file[8] = 0xff;  // declare 0x..ff header bytes, more than the file holds
  EXPECT_TRUE(Contains(parse_error(file), "truncated header"));
  Bytes v2 = npy_file(2, header_for("|u1", "(1,)"), "\x2a");
  v2[11] = 0xff;  // a 4-byte size near 4 GiB must not be trusted either
  EXPECT_TRUE(Contains(parse_error(v2), "truncated header"));
}

// Guards against accepting a header that is some other Python literal.
TEST(NpyErrors, HeaderNotADict) {
  EXPECT_TRUE(Contains(parse_error(npy_file(1, "['descr', '<f4']\n", "")), "header is not a dict"));
  EXPECT_TRUE(Contains(parse_error(npy_file(1, "", "")), "header is not a dict"));
}

// Guards against defaulting a missing key instead of reporting it.
TEST(NpyErrors, MissingKey) {
  EXPECT_TRUE(Contains(parse_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False}", "")),
                       "missing key 'shape'"));
  EXPECT_TRUE(Contains(parse_error(npy_file(1, "{'fortran_order': False, 'shape': ()}", "")),
                       "missing key 'descr'"));
  EXPECT_TRUE(Contains(parse_error(npy_file(1, "{'descr': '<f4', 'shape': (0,)}", "")),
                       "missing key 'fortran_order'"));
}

// Guards against last-one-wins on a duplicated key, which would hide a conflicting header.
TEST(NpyErrors, DuplicateKey) {
  const std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), 'descr': '<f8'}";
  EXPECT_TRUE(Contains(parse_error(npy_file(1, header, "")), "duplicate key 'descr'"));
}

// Guards against silently ignoring keys that NumPy itself would reject.
TEST(NpyErrors, UnexpectedKey) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), 'x': 1}";
  EXPECT_TRUE(Contains(parse_error(npy_file(1, header, "")), "unexpected key 'x'"));
}

// Guards against reading column-major data as row-major.
TEST(NpyErrors, FortranOrder) {
  const std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }";
  EXPECT_TRUE(Contains(parse_error(npy_file(1, header, std::string(16, '\0'))),
                       "Fortran order is not supported; use np.ascontiguousarray"));
  const std::string not_bool = "{'descr': '<f4', 'fortran_order': 0, 'shape': (0,), }";
  EXPECT_TRUE(Contains(parse_error(npy_file(1, not_bool, "")), "must be True or False"));
}

// Guards against byte-swapped values from big-endian files.
TEST(NpyErrors, BigEndianDtype) {
  const std::string message =
      parse_error(npy_file(1, header_for(">f4", "(1,)"), std::string(4, '\0')));
  EXPECT_TRUE(Contains(message, "big-endian dtype '>f4'"));
  EXPECT_TRUE(Contains(message, "'<f4' (float32)"));
}

// Guards against reinterpreting other dtypes; the message must list what is supported.
TEST(NpyErrors, UnsupportedDtype) {
  for (const char* descr : {"<i4", "|b1", "<f2", "|i1", "<c8"}) {
    const std::string message = parse_error(npy_file(1, header_for(descr, "(0,)"), ""));
    EXPECT_TRUE(Contains(message, "unsupported dtype '" + std::string(descr) + "'"));
    EXPECT_TRUE(Contains(message, "supported: '|u1' (uint8), '<u2' (uint16)"));
  }
  const std::string structured = "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}";
  EXPECT_TRUE(Contains(parse_error(npy_file(1, structured, "")), "structured dtypes"));
}

// Guards against negative extents wrapping to huge sizes.
TEST(NpyErrors, NegativeShapeEntry) {
  EXPECT_TRUE(Contains(parse_error(npy_file(1, header_for("|u1", "(-1, 3)"), "")),
                       "must be non-negative, got -1"));
}

// Guards against truncating non-integer extents or misreading (3) as a tuple.
TEST(NpyErrors, NonIntegerShapeEntry) {
  for (const char* shape : {"(2.5,)", "('a',)", "(3e2,)", "(0x10,)", "(None,)"}) {
    EXPECT_TRUE(Contains(parse_error(npy_file(1, header_for("|u1", shape), "")), "integers"))
        << shape;
  }
  EXPECT_TRUE(
      Contains(parse_error(npy_file(1, header_for("|u1", "(3)"), "\x01\x02\x03")), "not a tuple"));
  EXPECT_TRUE(Contains(parse_error(npy_file(1, header_for("|u1", "[3]"), "\x01\x02\x03")),
                       "'shape' must be a tuple"));
}

// Guards against undefined behaviour when extents or their product do not fit 64 bits.
TEST(NpyErrors, ElementCountOverflow) {
  EXPECT_TRUE(Contains(parse_error(npy_file(1, header_for("|u1", "(99999999999999999999,)"), "")),
                       "too large"));
  EXPECT_TRUE(Contains(parse_error(npy_file(1, header_for("|u1", "(4294967296, 4294967296)"), "")),
                       "element count overflow"));
  // 2^62 float32 elements fit in size_t, their 2^64 bytes do not.
  EXPECT_TRUE(Contains(parse_error(npy_file(1, header_for("<f4", "(4611686018427387904,)"), "")),
                       "element count overflow"));
  const std::vector<size_t> huge = {size_t{1} << 32, size_t{1} << 32};
  EXPECT_THROW(npy_element_count(huge), NpyError);
  // A zero extent does not excuse the others (NumPy rejects this too).
  EXPECT_TRUE(
      Contains(parse_error(npy_file(1, header_for("|u1", "(0, 4294967296, 4294967296)"), "")),
               "element count overflow"));
}

// Guards against short reads and silently ignored trailing bytes.
TEST(NpyErrors, DataSizeMismatch) {
  const std::string header = header_for("<f4", "(2, 3)");
  const std::string too_short = parse_error(npy_file(1, header, std::string(20, '\0')));
  EXPECT_TRUE(Contains(too_short, "data size mismatch"));
  EXPECT_TRUE(Contains(too_short, "needs 24 bytes, but 20 bytes follow"));
  EXPECT_TRUE(
      Contains(parse_error(npy_file(1, header, std::string(25, '\0'))), "but 25 bytes follow"));
}

// Guards against accepting malformed Python syntax.
TEST(NpyErrors, MalformedHeaderSyntax) {
  const char* headers[] = {
      "{'descr: '<f4', 'fortran_order': False, 'shape': (0,)}",         // unterminated key
      "{'descr' '<f4', 'fortran_order': False, 'shape': (0,)}",         // missing ':'
      "{'descr': '<f4' 'fortran_order': False, 'shape': (0,)}",         // missing ','
      "{'descr': '<f4', 'fortran_order': False, 'shape': (0,)} extra",  // trailing text
      "{'descr': '<f4', 'fortran_order': False, 'shape': (0,)",         // no closing brace
      "{'descr': '<f4', 'fortran_order': False, 'shape': (0,,)}",       // empty tuple slot
      "{'descr': '<\\n4', 'fortran_order': False, 'shape': (0,)}",      // unsupported escape
      "{, 'descr': '<f4', 'fortran_order': False, 'shape': (0,)}",      // leading comma
  };
  for (const char* header : headers) {
    EXPECT_TRUE(Contains(parse_error(npy_file(1, header, "")), "malformed header")) << header;
  }
}

// Guards against raw control bytes from a hostile file ending up in error messages.
TEST(NpyErrors, MessagesEscapeBinary) {
  const std::string message = parse_error(npy_file(1, std::string("\x01\x02\xff", 3), ""));
  EXPECT_TRUE(Contains(message, "\\x01\\x02\\xff"));
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
// Hostile input.

// Guards against out-of-bounds reads or crashes on a file cut short at any byte.
TEST(NpyHostile, EveryTruncationThrows) {
  const std::vector<Bytes> files = {
      serialize_npy(NpyArray({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6})),
      serialize_npy(NpyArray({}, std::vector<double>{2.5})),
      npy_file(2, header_for("<u2", "(2,)"), "\x01\x02\x03\x04"),
      npy_file(1, "{'descr':'|u1','fortran_order':False,'shape':(0,)}", ""),
  };
  for (const Bytes& file : files) {
    ASSERT_NO_THROW(parse_npy(file));
    for (size_t length = 0; length < file.size(); ++length) {
      // A copy of exactly `length` bytes, so AddressSanitizer catches reads past the prefix.
      const Bytes prefix(file.begin(), file.begin() + length);
      EXPECT_THROW(parse_npy(prefix), NpyError) << "prefix of " << length << " bytes";
    }
  }
}

// Guards against crashes or non-NpyError exceptions on corrupted files (a small built-in fuzzer).
TEST(NpyHostile, RandomMutationsThrowOnlyNpyError) {
  const Bytes seed = npy_file(1, header_for("<f4", "(2, 3)"), std::string(24, '\x01'));
  std::mt19937 rng(12345);
  for (int round = 0; round < 20000; ++round) {
    Bytes file = seed;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % file.size();
      switch (rng() % 3) {
        case 0:
          file[at] = uint8_t(rng());
          break;
        case 1:
          file.erase(file.begin() + at);
          break;
        default:
          file.insert(file.begin() + at, "(),:'0L9-"[rng() % 9]);
      }
    }
    try {
      const NpyArray a = parse_npy(file);
      EXPECT_NO_THROW(a.validate());
    } catch (const NpyError&) {
    }
  }
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
np.save(d + '/int32.npy', np.arange(3, dtype=np.int32))
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

  // Re-serializing what np.save wrote must give back the same bytes.
  for (const char* name :
       {"u8.npy", "u16.npy", "f32.npy", "f64.npy", "scalar.npy", "empty.npy", "rank4.npy"}) {
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
  EXPECT_TRUE(Contains(error("int32.npy"), "unsupported dtype '<i4'"));
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
