// mxgate: the command-line entry point. Dispatches to one verb; every error is reported with a
// message naming the problem and exit code 2, never a crash.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "impl/plugin.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/backend_select.h"
#include "tools/mxgate/verbs.h"

namespace {

using mxgate::cli::Verb;

constexpr Verb kVerbs[] = {
    {"gate",
     "gate [--only PATTERN] [--seed S] [--cases N] [--backend auto|host|hip|cuda] "
     "[--impl SPEC,...] [--exhaustive] [--skip STAGE,...] [--fuzz-seconds S] "
     "[--time-budget SECONDS] [--check-timeout SECONDS] [--report FILE.json] [--junit FILE.xml]",
     "The check to run before a merge. Stages, in order: format checks, reference self-checks,\n"
     "the self-test (selftest.*: each detector proven both ways, a faithful twin that must pass\n"
     "beside each plant that must give exactly the answer written beside it: example_plugin (the\n"
     "correct example at M=5 N=3 K=160 and every property; its planted implementations caught),\n"
     "plugin_tactics (a faulty tactic caught in that tactic alone), numpy_adapters (the numpy\n"
     "reference adapter passes, numpy_faulty's are caught; interpreter: MXGATE_PYTHON, else the\n"
     "first of python3 and /usr/bin/python3 that imports numpy, named; a skip only where none\n"
     "can), cast_sweep (the inputs a ties-away cast differs at over [1, 2): count, first, last),\n"
     "accumulators (every registered model's simulated kernel through gemm.ordered_bound, its\n"
     "bound's tightness, the probe naming it), guard_bands (an exact writer passes; writes past\n"
     "either end located at the damaged offsets); a wrong answer fails its check),\n"
     "every property suite on every selected backend (property.NAME), properties.coverage (fails\n"
     "when a required input class was never generated; lists every tag with its count), replay\n"
     "of corpus/regressions/*.case (regression.STEM), the decision model's tables of named cases\n"
     "on the model and on dispatch (decisions.tables), and every fuzz target of fuzz/, linked\n"
     "into this CLI (fuzz.TARGET: replay corpus/fuzz/TARGET, then mutate it for --fuzz-seconds).\n"
     "A stage that cannot run (no corpus, a target not linked) is an error check, never a skip;\n"
     "only --skip skips a stage. A property that does not apply on a backend (the 2^31-element\n"
     "dequantize.large_offsets on the host: Z29 is device only) is a skip naming why.\n"
     "A progress line per check, then a summary table (check, backend, cases, result, time). A\n"
     "failure prints the shrunk counterexample, the located element (coordinates, expected and\n"
     "actual bits, ULP distance) and one command that reproduces it.\n"
     "  --only       run the checks whose name contains PATTERN\n"
     "  --seed       seeds every random case (default 1)\n"
     "  --cases      cases per property (default 100) and random cases of the randomized\n"
     "               reference checks (default 20)\n"
     "  --backend    auto (default: the GPU when this build has one and a GPU is present, else\n"
     "               host), host, hip, cuda, or a comma list; property and regression checks run\n"
     "               on each\n"
     "  --impl       implementations to gate besides the built-in one (`mxgate impls` lists\n"
     "               them; SPEC: a shipped plugin NAME[:IMPL], PATH.so[:IMPL], a Python adapter\n"
     "               py:MODULE:OBJECT run in a worker process (MXGATE_PYTHON, default python3;\n"
     "               one that crashes or hangs past MXGATE_PYTHON_TIMEOUT is an error of that\n"
     "               check)): every property\n"
     "               of their ops' families, checks property.NAME[IMPL]; a plugin that does not\n"
     "               load is one error check impl.load[SPEC] and the run goes on. Unsupported\n"
     "               cases are counted and shown, never failures; an op declining a case inside\n"
     "               its own contract is a failure (contract_mismatch)\n"
     "  --exhaustive add cast.exhaustive[IMPL]: every host cast op of --impl on all 2^32 fp32\n"
     "               inputs per target format (mxgate sweep-cast; tens of seconds per format)\n"
     "  --skip       stages reported as skipped: formats, reference, selftest, properties,\n"
     "               coverage, regressions, decisions, fuzz\n"
     "  --fuzz-seconds  the mutation run of each fuzz target (default 8; 0: replay only)\n"
     "  --time-budget  checks not started within SECONDS are reported as skipped (time budget)\n"
     "  --check-timeout  watchdog (default 600): each check runs in a child process; one with no\n"
     "               result after SECONDS is killed and reported as an error naming the last\n"
     "               kernel it launched; a crash is an error naming the signal; the run goes on\n"
     "  --report     JSON report (schema mxgate-gate-report/1); a failing GEMM check draws its\n"
     "               mismatch map next to it (CHECK.svg, CHECK.png)\n"
     "  --junit      JUnit XML report (report/junit.xsd)\n"
     "Refuses to run while MXGATE_FAULTS is set. Test hooks: MXGATE_GATE_HANG=CHECK makes that\n"
     "check hang (launch \"test_hang\") to exercise the watchdog; MXGATE_MACHINERY_FAULT=NAME\n"
     "plants one fault in mxgate's own machinery (common/machinery_fault.h: plugin_swaps_m_n,\n"
     "plugin_tactic_zero, sweep_first_chunk_only, adapter_drops_odd_row, back_guard_unchecked,\n"
     "probe_search_short, sm90_bound_chunk_256) for the self-test's tests: the run names it\n"
     "loudly, an unknown NAME is a usage error.\n"
     "Exit 0 all pass (skips allowed), 1 a check failed or errored, 2 usage error, 3 environment\n"
     "error (no GPU for --backend hip|cuda, a driver failure creating the backend).",
     mxgate::cli::cmd_gate},
    {"encode", "encode --format F --convention C VALUE...",
     "Encode fp32 values (decimal, hex-float 0x1.cp+8, inf, -inf, nan; decimal text is rounded\n"
     "to the nearest fp32 first) into format F under convention C. One hex code per line.",
     mxgate::cli::cmd_encode},
    {"decode", "decode --format F --convention C 0xHH...",
     "Decode codes of format F under convention C (the convention matters for e8m0). One line\n"
     "per code: the value as a hex-float (%a), a space, then %.9g.",
     mxgate::cli::cmd_decode},
    {"conventions", "conventions",
     "Print the convention matrix (each convention's policies and source) and a table of the\n"
     "edge inputs of docs/formats.md §6 against every convention.",
     mxgate::cli::cmd_conventions},
    {"shapes", "shapes [--model M] [--tp T] [--flagged] [--catalog FILE]",
     "List the production GEMM shape catalog (corpus/shapes/production_shapes.tsv): per-rank\n"
     "N x K of each model's linear layers under TP/EP, with alignment hazards. --model matches\n"
     "a substring of the model name; --flagged keeps shapes with a K%128, N%128 or part hazard.",
     mxgate::cli::cmd_shapes},
    {"quantize",
     "quantize --scheme {mx,mxfp4,mxfp6,nvfp4,act1x128,w128x128} --format F --convention C "
     "--in X.npy --out PREFIX [--scale-layout L] [--ue8m0] [--global-amax V] [--tile 1x16|16x16] "
     "[--pow2-scales]",
     "Quantize X, a (M, K) array, with convention C's reference quantizer. X is float32 or\n"
     "float64 (float64 is first rounded to the nearest fp32); other dtypes are rejected.\n"
     "  mx        blocks of 32 along K, e8m0 scales (mx_policy of C); F any MX element format:\n"
     "            e4m3fn e5m2 e4m3fnuz e5m2fnuz e2m3 e3m2 e2m1\n"
     "  mxfp4     mx with e2m1 elements (--format optional); mxfp6: mx with --format e2m3|e3m2\n"
     "  nvfp4     e2m1 in blocks of 16, E4M3 block scales, fp32 global scale: C is te_nvfp4_ref,\n"
     "            torchao_nvfp4 or flashinfer_nvfp4 (docs/fp4.md §6); --global-amax V\n"
     "            (default the amax of X), --tile 16x16 and --pow2-scales (te_nvfp4_ref only)\n"
     "  act1x128  1x128 groups along K, fp32 scales (block_policy of C)\n"
     "  w128x128  128x128 blocks, fp32 scales (block_policy of C)\n"
     "A convention without that quantizer is rejected with the list of those that have one.\n"
     "--ue8m0 (act1x128 / w128x128 only) rounds the fp32 scales to powers of two as C does.\n"
     "Writes PREFIX.data.npy, uint8 codes of format F, shape (M, K) (e2m1: packed two per byte,\n"
     "element 2i in the low nibble, (M, ceil(K/2))), and PREFIX.scales.npy:\n"
     "  mx: uint8 e8m0 bytes (M, ceil(K/32)); nvfp4: uint8 E4M3 bytes (M, ceil(K/16)) (E8M0 with\n"
     "  --pow2-scales) plus PREFIX.global.npy, float32 (1,), the global decode scale;\n"
     "  act1x128: float32 (M, ceil(K/128));\n"
     "  w128x128: float32 (ceil(M/128), ceil(K/128)); logical row-major.\n"
     "--scale-layout L (row_major col_major tma_col_major nv_swizzle_128x4 aiter_shuffle) writes\n"
     "the scales in that physical layout instead: a 1-D array of the layout's storage size,\n"
     "padding slots filled with 0. Files are written only after everything is computed. A NaN the\n"
     "convention's FP4 cast leaves undefined (aiter_gfx950, flashinfer_nvfp4) is an input error\n"
     "(exit 2); ocp_mx writes the elements of a NaN block as 0 (its scale carries the NaN).",
     mxgate::cli::cmd_quantize},
    {"dequantize",
     "dequantize --scheme {mx,mxfp4,mxfp6,nvfp4,act1x128,w128x128} --format F --convention C "
     "--data D.npy --scales S.npy --out Y.npy [--dtype float32|bf16] [--k K] [--global G.npy] "
     "[--pow2-scales]",
     "Inverse of quantize: D is uint8 codes of format F, (M, K); S holds the scales in the\n"
     "LOGICAL ROW-MAJOR shapes quantize writes without --scale-layout (physical layouts are not\n"
     "accepted). Each value is decode(code) * scale as one fp32 multiply; mx scales decode with\n"
     "C's e8m0 decode rule (e.g. vllm_e8m0_shift: byte 0 is 0.0), block scales are used as\n"
     "stored (C must still name a convention that defines F). --dtype float32 (default) writes\n"
     "float32 (M, K); --dtype bf16 rounds that fp32 product once (RNE) and writes the bf16 bit\n"
     "patterns as a uint16 (M, K) array (view it with .view(torch.bfloat16) or ml_dtypes).\n"
     "e2m1 data is packed (M, ceil(K/2)), low nibble first; --k K (default twice the columns)\n"
     "says how many codes a row holds. nvfp4: S is uint8 E4M3 (M, ceil(K/16)) (E8M0 with\n"
     "--pow2-scales), --global G.npy the float32 (1,) global decode scale; each value is\n"
     "code * scale * global rounded once.",
     mxgate::cli::cmd_dequantize},
    {"gemm",
     "gemm --scheme {mx,mxfp4,mxfp6,nvfp4,block,bf16} --a A.npy [--a-scales AS.npy] --b B.npy "
     "[--b-scales BS.npy] --out C.npy [--dtype float32|bf16] [--format F] [--a-format F] "
     "[--b-format F] [--k K] [--a-global G.npy --b-global G.npy] [--convention C] "
     "[--a-block RxC --b-block RxC]",
     "C = A * B^T computed exactly and rounded ONCE (RNE) to --dtype: float32 (default) writes a\n"
     "float32 (M, N) array, bf16 a uint16 (M, N) array of bf16 bits. Every correct kernel whose\n"
     "accumulation is exact equals it bit for bit.\n"
     "  mx     A uint8 (M, K) codes of --format (default e4m3fn), AS uint8 e8m0 (M, ceil(K/32));\n"
     "         B uint8 (N, K), BS uint8 (N, ceil(K/32)). Scale bytes decode with --convention's\n"
     "         e8m0 rule (default ocp_mx: 0x00 = 2^-127; vllm_e8m0_shift: byte << 23, 0x00 = 0).\n"
     "         --a-format / --b-format give each operand its MX format (mixed MXFP8 x MXFP4,\n"
     "         MXFP6 x MXFP8); e2m1 operands are packed (rows, ceil(K/2)), low nibble first, with\n"
     "         --k K when no operand is unpacked (else --k must equal the unpacked one's K).\n"
     "         mxfp4 / mxfp6: mx with e2m1 / e2m3|e3m2.\n"
     "  nvfp4  A, B packed e2m1; AS, BS uint8 E4M3 (rows, ceil(K/16)); --a-global / --b-global\n"
     "         float32 (1,) global decode scales: C = fl32(alpha * acc) with\n"
     "         alpha = fl32(ga * gb), acc the exact sum rounded to fp32 (the epilogue of\n"
     "         docs/fp4.md §8), then --dtype.\n"
     "  block  A uint8 (M, K) codes, AS float32 (M, ceil(K/128)) (1x128 groups); B uint8 (N, K),\n"
     "         BS float32 (ceil(N/128), ceil(K/128)) (128x128 blocks). No --convention.\n"
     "         --a-block / --b-block RxC: other scale blocks (0: the whole dimension: 1x0\n"
     "         one scale per row, 0x0 one per tensor; the grids ceil(M/R) x ceil(K/C)).\n"
     "  bf16   A uint16 (M, K) and B uint16 (N, K) bf16 bits; no scale, format or convention\n"
     "         options.\n"
     "Scales are logical row-major. Options a scheme does not use are rejected.",
     mxgate::cli::cmd_gemm},
    {"check-gemm",
     "check-gemm --scheme {mx,mxfp4,mxfp6,nvfp4,block,bf16} --a A.npy [--a-scales AS.npy] "
     "--b B.npy [--b-scales BS.npy] --c C.npy [--mode exact|bound] "
     "[--accumulator NAME[:PARAM=V,...] | --acc-bits 24 --block-k 128] [--format F] "
     "[--a-format F] [--b-format F] [--k K] [--a-global G.npy --b-global G.npy] [--convention C] "
     "[--a-block RxC --b-block RxC] [--heatmap FILE.svg|FILE.png] [--offsets OFFS.npy "
     "[--offsets-kind ends|starts] [--offsets-alignment N] | --masked-counts COUNTS.npy] "
     "[--c-before C0.npy]",
     "Check C, a kernel's (M, N) output of A * B^T (same inputs as `mxgate gemm`), against the\n"
     "oracle. C is float32, or uint16 holding bf16 bits; the output dtype is taken from it.\n"
     "  --mode exact (default): C must equal the correctly rounded result bit for bit (any NaN\n"
     "      equals any NaN). Prints the mismatch count, the first and the worst element with\n"
     "      (row,col), expected and actual bits in hex, and the ULP distance.\n"
     "  --mode bound: C must lie within the rigorous error bound of an accumulator with\n"
     "      --acc-bits significand bits (8..24, unit roundoff 2^-acc-bits: 24 = fp32\n"
     "      round-to-nearest, 23 = truncating) and fp32's exponent range, summing partials of at\n"
     "      most --block-k consecutive k in any order (0: one partial over K), each product\n"
     "      rounded once and each partial scaled with two roundings (gemm_oracle.h AccumModel).\n"
     "      Prints the count outside and the worst excess with (row,col).\n"
     "  --accumulator NAME[:PARAM=V,...]: in bound mode, the bound of a named accumulator model\n"
     "      instead of the --acc-bits / --block-k one (`mxgate accumulators` lists the models and\n"
     "      their parameters; fp32_rn is the default manual form, sm90_fp8_mma Hopper FP8\n"
     "      tensor cores); an unknown NAME lists every model. In exact mode it adds one line:\n"
     "      whether the operands are exact in that accumulator (if not, a correct kernel may\n"
     "      differ from the correctly rounded C; checked up to M*N*K = 2^28).\n"
     "  --heatmap FILE draws where C differs (SVG or PNG by the extension), even when it passes.\n"
     "  --offsets OFFS.npy: a grouped (MoE) dump, docs/grouped.md: OFFS int32 or int64 (E,), the\n"
     "      cumulative row ends of each expert's group (--offsets-kind starts: their first rows),\n"
     "      each a multiple of --offsets-alignment (default 1); A (rows, K) with its scales per\n"
     "      row, B (E, N, K) and its scales (E, ...) one dense grid per expert, C (rows, N).\n"
     "      Elements are located as group, row within the group (and global row), col.\n"
     "  --masked-counts COUNTS.npy: a masked dump: COUNTS int32 or int64 (E,) valid rows per\n"
     "      expert; A (E, max_m, K), its scales (E, max_m, ...), C (E, max_m, N).\n"
     "  --c-before C0.npy: with a grouped dump, C's buffer before the kernel ran (e.g. poison):\n"
     "      rows no group writes (masked rows, rows past the last offset) must keep its bits.\n"
     "Exit 0 when C passes, 1 when it fails, 2 on bad input.",
     mxgate::cli::cmd_check_gemm},
    {"accumulators", "accumulators [--json]",
     "List the named accumulator models (docs/accumulators.md): name, kind, every parameter\n"
     "with its value and meaning, a one-line description and the sources of its numbers.\n"
     "--json prints [{\"name\", \"kind\", \"parameters\": {...}, \"description\",\n"
     "\"source\"}].",
     mxgate::cli::cmd_accumulators},
    {"probe-accumulator",
     "probe-accumulator (--simulate MODEL[:PARAM=V,...] | --impl SPEC[:OP] [--backend B]) "
     "[--scaling per-tensor|block] [--m 16] [--n 16] [--k 1024] [--format e4m3fn] [--json]",
     "Measure an FP8 GEMM's accumulator with crafted inputs (the method of Fasi, Higham,\n"
     "Mikaitis, Pranesh, PeerJ CS 7:e330, 2021; docs/accumulators.md §7): the precision kept\n"
     "relative to the largest term, the rounding of the bits shifted out (truncate,\n"
     "nearest_even, ...), whether a group sum is renormalised, the chunk of k after which\n"
     "partials are promoted to fp32 and the number of products added at once; then the\n"
     "model spec that matches, and the evidence of each conclusion. Every call is an M x N x K\n"
     "GEMM (--m, --n: 16; --k: 1024, chunks and groups up to K are found) with one nonzero\n"
     "row of A and of B; the result is C[0][0].\n"
     "  --simulate  the implementation is the software simulation of that model\n"
     "  --impl      an implementation's gemm_block or gemm_mx op (SPEC as for `mxgate impls`;\n"
     "              :OP names the op, else the gemm_block op whose scale blocks are the\n"
     "              probe's, else the first GEMM op that can run the calls), called through\n"
     "              the harness (guarded buffers, device memory for device ops) on --backend\n"
     "              (auto, host, hip, cuda; default auto) (docs/plugins.md §10)\n"
     "  --scaling   per-tensor (default: one fp32 scale each) or block (1x128 / 128x128)\n"
     "  --format    FP8 element format of the codes (default e4m3fn; e5m2, e4m3fnuz, e5m2fnuz)\n"
     "--json prints the parameters, the matching model (or null) and the evidence.\n"
     "Exit 0 after a measurement, 2 on bad input (an op the probe cannot run on, a plugin that\n"
     "cannot be loaded), 3 when a device op's device is missing.",
     mxgate::cli::cmd_probe_accumulator},
    {"plan",
     "plan --platform P (--scheme S --n N --k K [--flags is_bmm,skip_weight_relayout] "
     "[--weight-scale e8m0|fp32] | --model NAME --tp T [--ep E] [--catalog FILE] "
     "[--moe-models FILE]) "
     "[--disable LINEAR_KERNEL,...] [--impl py:MODULE:OBJECT] [--json]",
     "The linear kernel the dispatch registry picks for one layer of weight N x K, the load-time\n"
     "actions of its process_weights_after_loading and the path apply then takes.\n"
     "  --platform gfx950 gfx942 sm90 host; --scheme mxfp8 fp8_block bf16\n"
     "  --weight-scale: default e8m0 for mxfp8 (the only one), fp32 for fp8_block\n"
     "  --flags is_bmm / skip_weight_relayout: the layer's weight is read directly (no relayout)\n"
     "  --model NAME --tp T: every catalogued layer of the models whose name contains NAME at TP\n"
     "      T (--catalog FILE, default corpus/shapes/production_shapes.tsv); BMM layers are\n"
     "      is_bmm, MLA kv_b_proj is skip_weight_relayout, unmodelled formats are listed;\n"
     "      then each MoE model's routed-expert GEMMs per rank (--moe-models FILE, default\n"
     "      corpus/shapes/moe_models.tsv: routed / shared experts, top-k, moe_intermediate I):\n"
     "      w13 N = 2I/T and w2 K = I/T, every expert on every rank; with --ep E (a multiple of\n"
     "      T dividing the routed experts: EP = TP x DP) E/EP experts per rank with the full I;\n"
     "      the grouped family (grouped_gemm_block for FP8 block, grouped_gemm_mx for MXFP8;\n"
     "      MXFP4 listed as not modelled), the first built-in kernel whose contract admits\n"
     "      N x K, and the weight blocks a shard cuts (K % 128 = 64 at TP 8: outside the\n"
     "      contract); shared experts are the dense shared_expert_* layers (docs/grouped.md §7.1)\n"
     "  --disable: linear kernels skipped by name, like VLLM_DISABLED_KERNELS\n"
     "  --impl py:MODULE:OBJECT: a layer adapter's decisions (its select and declared load\n"
     "      transforms) beside the decision model's, per layer (BF16 layers and expert\n"
     "      GEMMs left out; --ep and --moe-models do not go with it), with\n"
     "      'same' or 'DIFFERENT' (docs/layers.md §6); exit 0 either way, 3 when unavailable\n"
     "--json prints {\"linear_kernel\": K, \"load\": [ACTION...], \"apply\": PATH} (with\n"
     "--model: a list of them with model, layer, n, k; expert GEMMs add grouped_family,\n"
     "kernel, contract, experts_per_rank, top_k, hazards, ...). Actions:\n"
     "dequantize_weight_to_bf16 upcast_weight_scale_e8m0_to_fp32 preshuffle_weight; paths:\n"
     "mxfp8_dot_scaled mxfp8_dequant_per_step bf16_gemm fp8_blockscale "
     "fp8_blockscale_bpreshuffle.\n"
     "Exit 2 when the input is bad (an EP that does not divide the experts, a table that\n"
     "disagrees with the catalog) or no linear kernel can run the layer (the message says why).",
     mxgate::cli::cmd_plan},
    {"property",
     "property NAME...|all [--impl SPEC,...] [--backend auto|host|hip|cuda] [--seed S] "
     "[--cases N] [--faults LIST] [--save FILE] [--tactic N] [--max-tactics N] | property --list",
     "Run property suites under RapidCheck on one backend (default host): every case derives\n"
     "from --seed (default 1); --cases per property (default 100). A failure is shrunk to its\n"
     "minimal case and printed with the located element and the command that reproduces it;\n"
     "--save FILE writes that case as a regression file (see `mxgate repro`), recording the\n"
     "implementation. --impl (default builtin; `mxgate impls` lists them) runs the properties of\n"
     "its ops' families over those ops, inside each op's contract; with `all`, properties that do\n"
     "not apply are left out. Cases an op cannot take are counted as unsupported, never failed.\n"
     "An op declaring tactics (several kernels for one call) is checked over every tactic, a\n"
     "seeded sample past --max-tactics (default 8); --tactic N checks tactic N alone, and every\n"
     "verdict, reproduce line and --save file names its tactic.\n"
     "--faults plants zoo faults into the built-in kernels (dispatch/faults.h names;\n"
     "MXGATE_FAULTS adds to them). --list prints every property, the op families it applies to\n"
     "and the failure it guards against. Progress (cases done, cases/s, time left) on stderr\n"
     "at most once a second when stderr is a terminal or MXGATE_PROGRESS=1; Ctrl-C stops before\n"
     "the next case, prints the partial result and runs no further property.\n"
     "Exit 0 all pass, 1 a property failed, 2 usage error or a plugin that does not load,\n"
     "3 environment error (no device, a plugin's init refused), 130 interrupted.",
     mxgate::cli::cmd_property},
    {"zoo",
     "zoo [--json] [--fault LIST] [--seeds N] [--cases N] [--seed S] [--backend B] "
     "[--expected-only] [--save-regressions DIR] [--heatmap-dir DIR] | zoo --impl SPEC,... "
     "[--json] [--seeds N] [--cases N] [--seed S] [--backend B]",
     "Proof on the bug zoo (docs/bug_classes.md §2, Z1-Z59): for each fault, run every property\n"
     "with the fault planted (--expected-only: just the property docs/bug_classes.md names),\n"
     "count the cases until the first failure over --seeds seeds (default 20) starting at\n"
     "--seed, capped at --cases (default 100), and shrink the counterexample. Prints per fault:\n"
     "detected, the property that caught it fastest, its median cases to detection, whether the\n"
     "shrunk case is the minimal case of docs/bug_classes.md or smaller, and the case; --json\n"
     "prints the same as JSON.\n"
     "--save-regressions writes each shrunk case as DIR/zNN_PROPERTY.case; --heatmap-dir draws\n"
     "the mismatch map of a GEMM fault (SVG + PNG) on a scaled-up copy of its case.\n"
     "With --impl: the same proof over implementations, e.g. a plugin's planted faults\n"
     "(`--impl example:all`): every property that applies runs on each, an implementation whose\n"
     "description starts with `planted fault:` (the plugin declares it wrong on purpose;\n"
     "`mxgate impls` shows it) must be detected (the property, its median cases and the shrunk\n"
     "case are printed), any other must pass.\n"
     "A device-only class (Z29: 2^31 elements) prints n/a with the reason on the host backend.\n"
     "Exit 0 when every fault is detected with a minimal case, a device-only one on the host\n"
     "excepted (--impl: every planted one detected, every other passing), 1 otherwise.",
     mxgate::cli::cmd_zoo},
    {"repro", "repro FILE... [--backend B] [--impl SPEC]",
     "Replay regression files (corpus/regressions/*.case: property, impl, seed, case, optional\n"
     "`detects` faults) on the implementation each records (--impl: on that one instead). Each\n"
     "case must pass with no fault on and fail with each `detects` fault on; a case the\n"
     "implementation cannot take is reported as unsupported. Prints the verdict per file.\n"
     "A recorded case (`mxgate shrink`: `check-gemm: OPTIONS` over .npy files beside it and\n"
     "`expect: fail`) runs check-gemm on its files and is ok when the verdict is the expected.\n"
     "Exit 0 all ok, 1 a replay failed, 2 a malformed file or a plugin that does not load.",
     mxgate::cli::cmd_repro},
    {"impls", "impls [--json] [--impl SPEC,...]",
     "List every implementation: builtin, each shipped plugin of this build\n"
     "(<build>/plugins/libmxgate_NAME.so, or $MXGATE_PLUGIN_DIR) and those --impl names, with\n"
     "every op: its family, memory (host, cuda, hip; backend for the built-in ops, which run on\n"
     "the backend under test), contract (dimensions, dtypes, layouts, scale blocks, leading-\n"
     "dimension alignment, conventions, declared summation order) and accumulator model.\n"
     "--impl SPEC: builtin, a shipped NAME, NAME:IMPL, NAME:all, PATH.so, PATH.so:IMPL, or a\n"
     "Python adapter py:MODULE:OBJECT (its worker process is started to list it).\n"
     "Plugins are listed without calling their init(). --json prints schema mxgate-impls/1.\n"
     "Exit 0, 2 when a plugin does not load (each named on stderr).",
     mxgate::cli::cmd_impls},
    {"sweep-cast",
     "sweep-cast --impl SPEC,... [--op NAME] [--format F] [--from 0xBITS] [--count N]",
     "The exhaustive check of host cast ops (family cast, host memory): every fp32 bit pattern\n"
     "(all 2^32, or --count of them from --from) cast by the op and by the encoder of the\n"
     "convention it claims, for every target format that convention defines (or --format).\n"
     "Prints per op and format the inputs checked, the mismatches and the first differing input\n"
     "with both codes, and a command that reproduces it. Tens of seconds per format: not part of\n"
     "the default gate (`mxgate gate --exhaustive` adds it). Progress (done, inputs/s, time\n"
     "left) on stderr at most once a second when stderr is a terminal or MXGATE_PROGRESS=1.\n"
     "Ctrl-C stops at the next chunk of 2^22 inputs and prints the partial result.\n"
     "Exit 0 all equal, 1 a mismatch, 2 usage error or no host cast op, 130 interrupted.",
     mxgate::cli::cmd_sweep_cast},
    {"fuzz", "fuzz TARGET [PATH...] [--seconds S] [--seed S]",
     "Run one fuzz target of fuzz/ (fuzz_npy fuzz_shape_catalog fuzz_codecs fuzz_negotiation\n"
     "fuzz_dispatch fuzz_regression), linked into this CLI without libFuzzer: replay its seeds\n"
     "corpus/fuzz/TARGET (or the files / folders PATH, e.g. the input `mxgate gate` saved), then\n"
     "mutate them for --seconds (default 10; 0 when PATH is given) from --seed (default 1).\n"
     "Each input runs in a worker process; the one that fails is saved and named.\n"
     "Exit 0 no failure, 1 an input failed (a target's check trapped or it hung), 2 usage error,\n"
     "3 the target is not linked into this build.",
     mxgate::cli::cmd_fuzz},
    {"replay", "replay DIR [--json FILE] [--junit FILE] [--heatmap-dir DIR] [--rerun]",
     "Judge every call a flight record holds (mxgate.record / MXGATE_RECORD, docs/record.md)\n"
     "against the reference with its op's declared convention and accumulator: check-gemm's\n"
     "bound mode with the declared accumulator model (exact mode when the op declares none),\n"
     "the first and worst element located, a summary per op and shape; --json / --junit write\n"
     "the report, --heatmap-dir an SVG per failing GEMM. A form the reference cannot take is\n"
     "unsupported, with the reason. --rerun also re-runs each recorded callable (where it can\n"
     "be imported) on its recorded inputs: other bits than recorded fail (non-deterministic).\n"
     "Run by the Python package (MXGATE_PYTHON, else the first\n"
     "of python3 and /usr/bin/python3 that imports numpy).\n"
     "Exit 0 all pass, 1 a call failed, 2 a bad dump (a truncated, missing or altered tensor\n"
     "file, an unknown dtype, a call without its completion marker: the file named), 3 no\n"
     "Python with numpy.",
     mxgate::cli::cmd_replay},
    {"shrink", "shrink RECORD [--out DIR] [--max-calls N]",
     "Reduce one failing recorded call (a record folder) while it keeps failing: M, N, K (K on\n"
     "the scale blocks' boundaries), then values, re-running the recorded callable in process\n"
     "when it can be imported (else M and N cut to the failing element, K kept). Writes a\n"
     "`.case` and its .npy files into --out (default RECORD/shrunk) that `mxgate repro`\n"
     "replays. Exit 0 shrunk, 1 the record does not fail, 2 bad input or a bad dump, 3 no\n"
     "Python with numpy.",
     mxgate::cli::cmd_shrink},
    {"survey",
     "survey [--impl SPEC,...] [--json] [--markdown FILE] [--cast-inputs all|sample] [--seed S] "
     "[--cases N] [--backend host|hip|cuda] [--check-timeout SECONDS]",
     "What every implementation does, in one table: builtin, every shipped plugin (NAME:all) and\n"
     "every shipped Python adapter (mxgate.adapters.SHIPPED, run by MXGATE_PYTHON; one that\n"
     "cannot be imported or is unavailable here is listed as such), or those --impl names\n"
     "(py:MODULE:OBJECT included). Per implementation:\n"
     "  casts       each cast op (host memory, or the --backend's) and target format against\n"
     "              every convention defining the format and, for e8m0, every e8m0 rule: the\n"
     "              conventions it equals bit for bit, else the count of differing inputs and the\n"
     "              first; --cast-inputs all (default) casts all 2^32 fp32 bit patterns,\n"
     "              sample 393216 of them (every sign and exponent, ties, zeros, Inf, NaN);\n"
     "              a host op reads them from one write-protected copy made once (16 GiB for\n"
     "              all, held when at most half of MemAvailable; MXGATE_SURVEY_RESIDENT=0\n"
     "              writes each call's inputs instead, =1 holds them always)\n"
     "  properties  every property that applies, with its verdict, cases, unsupported count and\n"
     "              shrunk case (--seed, default 1; --cases, default 100)\n"
     "Each piece runs in a watchdog child (--check-timeout, default 1800 s): a crash or hang is\n"
     "an error of that piece and the survey goes on. Prints the markdown table (progress first);\n"
     "--markdown FILE writes it, --json prints schema mxgate-survey/1 instead (progress on\n"
     "stderr). A line of progress (implementations done, rate, time left) on stderr at most\n"
     "once a second when stderr is a terminal or MXGATE_PROGRESS=1. Ctrl-C stops after the\n"
     "piece that runs and writes the report so far, marked partial (JSON \"partial\": true).\n"
     "Exit 0 when the survey ran (failures are its content), 2 usage error, 130 interrupted.",
     mxgate::cli::cmd_survey},
};

void usage(FILE* out) {
  std::fprintf(out,
               "mxgate: a correctness gate for MXFP8 / MXFP4 / NVFP4 quantization and block-scaled "
               "GEMM kernels\n\nusage: mxgate VERB [options]\n\nverbs:\n");
  for (const Verb& v : kVerbs) {
    std::fprintf(out, "  %.*s\n", static_cast<int>(v.synopsis.size()), v.synopsis.data());
  }
  std::fprintf(
      out,
      "\nformats: e4m3fn e5m2 e4m3fnuz e5m2fnuz e8m0 bf16 fp16 e2m1 e2m3 e3m2 e3m4 e4m3ieee "
      "e4m3b11fnuz mxint8\n"
      "`mxgate conventions` lists the conventions. `mxgate VERB --help` for details.\n"
      "Exit codes: 0 pass, 1 a check failed, 2 usage or input error, 3 environment error\n"
      "(no GPU when one was demanded, a driver failure).\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string verb = args[0];
  args.erase(args.begin());
  for (const Verb& v : kVerbs) {
    if (v.name != verb) continue;
    for (const std::string& a : args) {
      if (a == "--help" || a == "-h") {
        std::printf("usage: mxgate %.*s\n\n%.*s\n", static_cast<int>(v.synopsis.size()),
                    v.synopsis.data(), static_cast<int>(v.help.size()), v.help.data());
        return 0;
      }
    }
    try {
      return v.run(args);
    } catch (const mxgate::cli::EnvironmentError& e) {
      std::fprintf(stderr, "mxgate %s: environment error: %s\n", verb.c_str(), e.what());
      return 3;
    } catch (const mxgate::gpu::GpuError& e) {
      std::fprintf(stderr, "mxgate %s: environment error: %s\n", verb.c_str(), e.what());
      return 3;
    } catch (const mxgate::impl::PluginError& e) {
      std::fprintf(stderr, "mxgate %s: %s\n", verb.c_str(), e.what());
      return e.kind() == mxgate::impl::PluginError::Kind::kEnvironment ? 3 : 2;
    } catch (const mxgate::cli::UsageError& e) {
      std::fprintf(stderr, "mxgate %s: %s\n", verb.c_str(), e.what());
      return 2;
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "mxgate %s: %s\n", verb.c_str(), e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mxgate %s: error: %s\n", verb.c_str(), e.what());
      return 2;
    }
  }
  std::fprintf(stderr, "mxgate: unknown verb '%s'\n\n", verb.c_str());
  usage(stderr);
  return 2;
}
