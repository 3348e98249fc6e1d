// keepwatch_memory: hands the C heap's free pages back to the OS (glibc's malloc_trim) on a libuv
// worker thread. V8's helper threads (compiler, GC) and Node allocate and free through malloc at a
// steady churn; glibc keeps what they free mapped in their arenas, so a long-running node's RSS
// holds tens of MB of free memory. Elsewhere (musl, macOS) there is nothing to trim: resolves false.
#include <napi.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

class TrimWorker : public Napi::AsyncWorker {
 public:
  explicit TrimWorker(Napi::Env env) : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
#if defined(__GLIBC__)
    released_ = malloc_trim(0) != 0;
#endif
  }

  void OnOK() override { deferred_.Resolve(Napi::Boolean::New(Env(), released_)); }
  void OnError(const Napi::Error& err) override { deferred_.Reject(err.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  bool released_ = false;
};

// trim(): Promise<boolean>, true when some memory went back to the OS.
Napi::Value Trim(const Napi::CallbackInfo& info) {
  auto* worker = new TrimWorker(info.Env());  // AsyncWorker deletes itself once settled
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("trim", Napi::Function::New(env, Trim));
  return exports;
}

}  // namespace

NODE_API_MODULE(keepwatch_memory, Init)
