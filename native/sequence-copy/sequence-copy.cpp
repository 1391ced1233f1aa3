// The smallest binding Frontier needs that node-llama-cpp 3.21 lacks: copy the first `n` tokens
// of one KV sequence into another with llama.cpp's llama_memory_seq_cp, in the same llama_context
// node-llama-cpp created, through the very libllama it loaded (resolved with dlsym, never linked:
// a second copy of the library would hold other globals). See README.md in this folder.
//
// No Node or node-addon-api headers: the few N-API functions used are declared below (their C ABI
// is stable across Node versions), so the install needs only g++ and llama.h from the source
// node-llama-cpp bundles.
#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "llama.h"

extern "C" {
typedef struct napi_env__* napi_env;
typedef struct napi_value__* napi_value;
typedef struct napi_callback_info__* napi_callback_info;
typedef int napi_status;  // napi_ok == 0
typedef napi_value (*napi_callback)(napi_env env, napi_callback_info info);
napi_status napi_get_cb_info(napi_env, napi_callback_info, size_t*, napi_value*, napi_value*, void**);
napi_status napi_unwrap(napi_env, napi_value, void**);
napi_status napi_get_value_int32(napi_env, napi_value, int32_t*);
napi_status napi_get_value_uint32(napi_env, napi_value, uint32_t*);
napi_status napi_get_boolean(napi_env, bool, napi_value*);
napi_status napi_create_string_utf8(napi_env, const char*, size_t, napi_value*);
napi_status napi_throw_error(napi_env, const char*, const char*);
napi_status napi_create_function(napi_env, const char*, size_t, napi_callback, void*, napi_value*);
napi_status napi_set_named_property(napi_env, napi_value, const char*, napi_value);
}

namespace {

// node-llama-cpp's AddonContext (llama/addon/AddonContext.h, 3.21.1) from its first own member on:
// it follows Napi::ObjectWrap's base, whose size is found at run time (see locate()).
struct AddonContextFields {
  void* model;  // AddonModel*
  llama_context_params context_params;
  llama_context* ctx;
  llama_batch batch;
  uint64_t batchMemorySize;
  bool has_batch;
  int32_t batch_n_tokens;
  int n_cur;
  uint64_t loadedContextMemorySize;
  bool contextLoaded;
  std::mutex disposeMutex;
  bool disposed;
  bool memoryDisposed;
};

struct Llama {
  decltype(&llama_get_memory) get_memory = nullptr;
  decltype(&llama_memory_seq_cp) seq_cp = nullptr;
  decltype(&llama_memory_seq_rm) seq_rm = nullptr;
  decltype(&llama_memory_seq_pos_min) pos_min = nullptr;
  decltype(&llama_memory_seq_pos_max) pos_max = nullptr;
  decltype(&llama_n_ctx) n_ctx = nullptr;
  decltype(&llama_n_seq_max) n_seq_max = nullptr;
  decltype(&llama_batch_init) batch_init = nullptr;
  decltype(&llama_batch_free) batch_free = nullptr;
  decltype(&llama_decode) decode = nullptr;
  std::string path;
};

struct Found {
  std::string path;
  int count = 0;
};

int findLibllama(struct dl_phdr_info* info, size_t, void* data) {
  auto* found = static_cast<Found*>(data);
  const char* name = info->dlpi_name;
  if (name == nullptr || *name == '\0') return 0;
  const char* base = std::strrchr(name, '/');
  base = base == nullptr ? name : base + 1;
  if (std::strncmp(base, "libllama", 8) != 0 || std::strncmp(base, "libllama-common", 15) == 0) return 0;
  if (found->count == 0 || found->path != name) found->count++;
  found->path = name;
  return 0;
}

template <typename T>
bool symbol(void* handle, const char* name, T& out) {
  out = reinterpret_cast<T>(dlsym(handle, name));
  return out != nullptr;
}

// The libllama node-llama-cpp loaded (exactly one must be loaded), its functions resolved once.
const char* resolve(Llama& llama) {
  if (llama.decode != nullptr) return nullptr;
  Found found;
  dl_iterate_phdr(findLibllama, &found);
  if (found.count == 0) return "no libllama is loaded in this process (load the model first)";
  if (found.count > 1) return "more than one libllama is loaded in this process";
  void* handle = dlopen(found.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return "dlopen(RTLD_NOLOAD) of the loaded libllama failed";
  Llama l;
  l.path = found.path;
  bool ok = symbol(handle, "llama_get_memory", l.get_memory) && symbol(handle, "llama_memory_seq_cp", l.seq_cp) &&
            symbol(handle, "llama_memory_seq_rm", l.seq_rm) &&
            symbol(handle, "llama_memory_seq_pos_min", l.pos_min) &&
            symbol(handle, "llama_memory_seq_pos_max", l.pos_max) && symbol(handle, "llama_n_ctx", l.n_ctx) &&
            symbol(handle, "llama_n_seq_max", l.n_seq_max) && symbol(handle, "llama_batch_init", l.batch_init) &&
            symbol(handle, "llama_batch_free", l.batch_free) && symbol(handle, "llama_decode", l.decode);
  // The handle stays open: the library stays loaded as long as node-llama-cpp's addon does anyway.
  if (!ok) return "the loaded libllama lacks a llama_memory_* function this binding needs";
  llama = l;
  return nullptr;
}

Llama g_llama;

struct Expected {
  uint32_t cells;
  uint32_t batch;
  uint32_t sequences;
};

// The llama_context inside node-llama-cpp's AddonContext. Its own members start after
// Napi::ObjectWrap's base: found as the first word equal to the AddonModel pointer (the model
// object unwrapped the same way), then checked against what JS knows of the context (cells,
// batch, sequences, loaded and not disposed) before the context pointer is read.
const char* locate(void* addonContext, void* addonModel, const Expected& expected, llama_context** out) {
  auto* bytes = static_cast<unsigned char*>(addonContext);
  for (size_t offset = sizeof(void*); offset <= 128; offset += sizeof(void*)) {
    void* word;
    std::memcpy(&word, bytes + offset, sizeof word);
    if (word != addonModel) continue;
    auto* fields = reinterpret_cast<AddonContextFields*>(bytes + offset);
    const auto& params = fields->context_params;
    if (params.n_ctx != expected.cells || params.n_batch != expected.batch || params.n_seq_max != expected.sequences)
      return "node-llama-cpp's context object does not have the layout this binding was built for";
    if (!fields->contextLoaded || fields->disposed || fields->ctx == nullptr) return "the context is not loaded";
    llama_context* ctx = fields->ctx;
    if (g_llama.n_seq_max(ctx) != expected.sequences || g_llama.n_ctx(ctx) != expected.cells)
      return "the llama_context does not match the expected cells and sequences";
    *out = ctx;
    return nullptr;
  }
  return "the model pointer was not found in node-llama-cpp's context object";
}

napi_value fail(napi_env env, const char* why) {
  napi_throw_error(env, "FRONTIER_SEQUENCE_COPY", why);
  return nullptr;
}

bool args(napi_env env, napi_callback_info info, size_t want, napi_value* argv) {
  size_t argc = want;
  return napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) == 0 && argc == want;
}

const char* contextOf(napi_env env, napi_value* argv, llama_context** ctx) {
  void* addonContext = nullptr;
  void* addonModel = nullptr;
  Expected expected{};
  if (napi_unwrap(env, argv[0], &addonContext) != 0 || napi_unwrap(env, argv[1], &addonModel) != 0)
    return "arguments 1 and 2 must be node-llama-cpp's AddonContext and AddonModel objects";
  if (napi_get_value_uint32(env, argv[2], &expected.cells) != 0 ||
      napi_get_value_uint32(env, argv[3], &expected.batch) != 0 ||
      napi_get_value_uint32(env, argv[4], &expected.sequences) != 0)
    return "cells, batch and sequences must be numbers";
  if (const char* why = resolve(g_llama)) return why;
  return locate(addonContext, addonModel, expected, ctx);
}

// probe(addonContext, addonModel, cells, batch, sequences): the loaded libllama's path, or throws why
// this binding cannot copy sequences in this context.
napi_value Probe(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!args(env, info, 5, argv)) return fail(env, "probe takes 5 arguments");
  llama_context* ctx = nullptr;
  if (const char* why = contextOf(env, argv, &ctx)) return fail(env, why);
  napi_value result;
  napi_create_string_utf8(env, g_llama.path.c_str(), g_llama.path.size(), &result);
  return result;
}

// copyPrefix(addonContext, addonModel, cells, batch, sequences, src, dst, n, lastToken): make
// sequence `dst` hold exactly positions [0, n) of sequence `src` (whose token at n - 1 is
// `lastToken`). The caller holds node-llama-cpp's context lock (no decode runs meanwhile).
// With one KV stream per sequence (node-llama-cpp's contexts are not unified) llama.cpp copies
// the whole source stream at its next memory update; decoding the prefix's last token again in
// `dst` runs that update now, so the copy is complete (and `src` free to change) on return.
napi_value CopyPrefix(napi_env env, napi_callback_info info) {
  napi_value argv[9];
  if (!args(env, info, 9, argv)) return fail(env, "copyPrefix takes 9 arguments");
  llama_context* ctx = nullptr;
  if (const char* why = contextOf(env, argv, &ctx)) return fail(env, why);
  int32_t src = 0, dst = 0, n = 0, last = 0;
  if (napi_get_value_int32(env, argv[5], &src) != 0 || napi_get_value_int32(env, argv[6], &dst) != 0 ||
      napi_get_value_int32(env, argv[7], &n) != 0 || napi_get_value_int32(env, argv[8], &last) != 0)
    return fail(env, "src, dst, n and lastToken must be integers");
  const int32_t sequences = static_cast<int32_t>(g_llama.n_seq_max(ctx));
  if (src < 0 || dst < 0 || src >= sequences || dst >= sequences || src == dst)
    return fail(env, "src and dst must be two different sequences of the context");
  llama_memory_t mem = g_llama.get_memory(ctx);
  if (n < 1 || g_llama.pos_min(mem, src) != 0 || g_llama.pos_max(mem, src) < n - 1)
    return fail(env, "the source sequence does not hold positions [0, n)");
  g_llama.seq_rm(mem, dst, -1, -1);
  g_llama.seq_cp(mem, src, dst, -1, -1);
  if (!g_llama.seq_rm(mem, dst, n - 1, -1)) {
    g_llama.seq_rm(mem, dst, -1, -1);
    return fail(env, "llama.cpp could not cut the copied sequence to the prefix");
  }
  llama_batch batch = g_llama.batch_init(1, 0, 1);
  batch.n_tokens = 1;
  batch.token[0] = last;
  batch.pos[0] = n - 1;
  batch.n_seq_id[0] = 1;
  batch.seq_id[0][0] = dst;
  batch.logits[0] = 1;
  const int32_t decoded = g_llama.decode(ctx, batch);
  g_llama.batch_free(batch);
  if (decoded != 0 || g_llama.pos_min(mem, dst) != 0 || g_llama.pos_max(mem, dst) != n - 1) {
    g_llama.seq_rm(mem, dst, -1, -1);
    return fail(env, "llama.cpp could not evaluate the copied prefix's last token");
  }
  napi_value ok;
  napi_get_boolean(env, true, &ok);
  return ok;
}

void exportFunction(napi_env env, napi_value exports, const char* name, napi_callback cb) {
  napi_value fn;
  napi_create_function(env, name, std::strlen(name), cb, nullptr, &fn);
  napi_set_named_property(env, exports, name, fn);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  exportFunction(env, exports, "probe", Probe);
  exportFunction(env, exports, "copyPrefix", CopyPrefix);
  return exports;
}

extern "C" __attribute__((visibility("default"))) int32_t node_api_module_get_api_version_v1() { return 8; }
