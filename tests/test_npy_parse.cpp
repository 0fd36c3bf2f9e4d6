// Tests for reading .npy bytes with parse_npy (reference/npy.h; npy_read.cpp, npy_header.cpp,
// npy_dtype.cpp): hand-built files (versions 1.0, 2.0, 3.0, every dtype, scalar and zero-size
// shapes, unusual header spelling), every error path and its message, and truncated and mutated
// files.
// Not covered: writing, files on disk, check_npy and NumPy interoperability (test_npy_files.cpp),
// big-endian hosts (npy_common.h refuses to compile there), files larger than memory, non-ASCII
// header text, and the mxgate CLI options that call into this code.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "reference/npy.h"
#include "tests/npy_test_files.h"

namespace mxgate {
namespace {

using test_support::Bytes;
using test_support::Contains;
using test_support::header_for;
using test_support::npy_file;
using test_support::parse_error;
using test_support::to_bytes;

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
  for (const char* descr : {"<i2", "|b1", "<f2", "|i1", "<c8", "<u4"}) {
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

}  // namespace
}  // namespace mxgate
