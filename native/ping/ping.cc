// keepwatch_ping: one ICMP echo at a time over a non-blocking socket that libuv watches (uv_poll_t)
// on Node's own loop, so a ping check costs a file descriptor, never a thread or a process.
// JS owns the clock: it closes the socket when the check's budget runs out (src/probes/icmp.ts).
// Linux only: SOCK_NONBLOCK, ICMP_FILTER and datagram ICMP ("ping") sockets are Linux features.
#include <napi.h>
#include <uv.h>

#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace {

constexpr uint8_t kEchoRequest4 = 8, kEchoReply4 = 0;
constexpr uint8_t kEchoRequest6 = 128, kEchoReply6 = 129;
constexpr int kIcmpFilter = 1;  // ICMP_FILTER from linux/icmp.h, which clashes with glibc's headers
constexpr size_t kHeader = 8, kPayload = 16;

// RFC 1071 one's-complement sum; only IPv4 needs it from us (the kernel sums ICMPv6, pseudo-header and all).
uint16_t Checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += (uint32_t(data[i]) << 8) | data[i + 1];
  if (len & 1) sum += uint32_t(data[len - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return htons(uint16_t(~sum));
}

std::string ErrName(int err) {
  char name[64];
  uv_err_name_r(-err, name, sizeof name);  // libuv's codes are negated errno values on Unix
  return name;
}

Napi::Error ErrnoError(Napi::Env env, int err, const char* syscall) {
  std::string code = ErrName(err);
  Napi::Error error = Napi::Error::New(env, std::string(syscall) + " " + code + " (" + strerror(err) + ")");
  error.Set("code", code);
  error.Set("errno", Napi::Number::New(env, -err));
  error.Set("syscall", syscall);
  return error;
}

// The poll handle and the descriptor it watches live until libuv's close callback, which may run
// after the JS object that opened them is gone.
struct PollHandle {
  uv_poll_t poll;
  int fd;
};

void OnHandleClosed(uv_handle_t* handle) {
  PollHandle* owned = reinterpret_cast<PollHandle*>(handle);
  close(owned->fd);
  delete owned;
}

bool SameAddress(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == reinterpret_cast<const sockaddr_in&>(b).sin_addr.s_addr;
  }
  return memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr,
                sizeof(in6_addr)) == 0;
}

class IcmpSocket : public Napi::ObjectWrap<IcmpSocket> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "IcmpSocket", {
      InstanceMethod<&IcmpSocket::Echo>("echo"),
      InstanceMethod<&IcmpSocket::Close>("close"),
      InstanceAccessor<&IcmpSocket::Mode>("mode"),
    });
  }

  // new IcmpSocket(family: 4 | 6, datagramOnly: boolean): a datagram ICMP socket, or a raw one when
  // datagram sockets are refused and datagramOnly is false. Throws with `code` (the datagram errno)
  // and `rawCode` (the raw errno, when tried).
  IcmpSocket(const Napi::CallbackInfo& info) : Napi::ObjectWrap<IcmpSocket>(info), context_(info.Env(), "KeepwatchPing") {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsBoolean()) {
      Napi::TypeError::New(env, "IcmpSocket(family: 4 | 6, datagramOnly: boolean)").ThrowAsJavaScriptException();
      return;
    }
    int family = info[0].As<Napi::Number>().Int32Value();
    if (family != 4 && family != 6) {
      Napi::TypeError::New(env, "family must be 4 or 6").ThrowAsJavaScriptException();
      return;
    }
    v6_ = family == 6;
    int domain = v6_ ? AF_INET6 : AF_INET;
    int protocol = v6_ ? int(IPPROTO_ICMPV6) : int(IPPROTO_ICMP);
    int fd = socket(domain, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
    if (fd < 0) {
      int dgramErr = errno;
      bool fallback = dgramErr == EACCES || dgramErr == EPERM || dgramErr == EPROTONOSUPPORT || dgramErr == ESOCKTNOSUPPORT;
      if (info[1].As<Napi::Boolean>().Value() || !fallback) {
        ErrnoError(env, dgramErr, "socket").ThrowAsJavaScriptException();
        return;
      }
      fd = socket(domain, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
      if (fd < 0) {
        Napi::Error error = ErrnoError(env, dgramErr, "socket");
        error.Set("rawCode", ErrName(errno));
        error.ThrowAsJavaScriptException();
        return;
      }
      raw_ = true;
      FilterEchoReplies(fd, v6_);
    }
    uv_loop_t* loop = nullptr;
    handle_ = new PollHandle{};
    handle_->fd = fd;
    int err = napi_get_uv_event_loop(env, &loop) == napi_ok ? uv_poll_init(loop, &handle_->poll, fd) : UV_EINVAL;
    if (err != 0) {
      close(fd);
      delete handle_;
      handle_ = nullptr;
      ErrnoError(env, -err, "uv_poll_init").ThrowAsJavaScriptException();
      return;
    }
    handle_->poll.data = this;
    // Every raw ICMP socket sees every echo reply the host receives: ours carry this identifier.
    static uint16_t nextId = uint16_t(getpid());
    id_ = nextId++;
  }

  ~IcmpSocket() override { Release(); }

 private:
  Napi::Value Mode(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), raw_ ? "raw" : "dgram"); }

  // echo(address: string, sequence: number, done: (err: Error | null, rttMs: number) => void):
  // sends one request; `done` runs once, on the matching reply or a receive error, never after close().
  // A send failure throws (ENETUNREACH, EHOSTUNREACH...).
  Napi::Value Echo(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsFunction()) {
      Napi::TypeError::New(env, "echo(address: string, sequence: number, done: Function)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (handle_ == nullptr || pending_) {
      Napi::Error::New(env, handle_ == nullptr ? "socket is closed" : "an echo is already in flight").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    std::string address = info[0].As<Napi::String>().Utf8Value();
    memset(&dest_, 0, sizeof dest_);
    int parsed = v6_ ? uv_ip6_addr(address.c_str(), 0, reinterpret_cast<sockaddr_in6*>(&dest_))
                     : uv_ip4_addr(address.c_str(), 0, reinterpret_cast<sockaddr_in*>(&dest_));
    if (parsed != 0) {
      Napi::TypeError::New(env, "not an IPv" + std::string(v6_ ? "6" : "4") + " address: " + address).ThrowAsJavaScriptException();
      return env.Undefined();
    }
    sequence_ = uint16_t(info[1].As<Napi::Number>().Uint32Value());

    uint8_t packet[kHeader + kPayload] = {};
    packet[0] = v6_ ? kEchoRequest6 : kEchoRequest4;
    uint16_t id = htons(id_), seq = htons(sequence_);  // a datagram socket's kernel rewrites the id
    memcpy(packet + 4, &id, 2);
    memcpy(packet + 6, &seq, 2);
    memcpy(packet + kHeader, "keepwatch ping..", kPayload);
    if (!v6_) {
      uint16_t sum = Checksum(packet, sizeof packet);
      memcpy(packet + 2, &sum, 2);
    }
    socklen_t len = v6_ ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    if (sendto(handle_->fd, packet, sizeof packet, 0, reinterpret_cast<sockaddr*>(&dest_), len) < 0) {
      ErrnoError(env, errno, "sendto").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    sentAt_ = uv_hrtime();
    int err = uv_poll_start(&handle_->poll, UV_READABLE, OnPoll);
    if (err != 0) {
      ErrnoError(env, -err, "uv_poll_start").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    done_ = Napi::Persistent(info[2].As<Napi::Function>());
    pending_ = true;
    Ref();  // the JS object must outlive the reply it waits for
    return env.Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (pending_) {
      pending_ = false;
      done_.Reset();
      Unref();
    }
    Release();
    return info.Env().Undefined();
  }

  // Hands the handle to libuv for closing; the descriptor is closed in OnHandleClosed.
  void Release() {
    if (handle_ == nullptr) return;
    handle_->poll.data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&handle_->poll), OnHandleClosed);
    handle_ = nullptr;
  }

  static void OnPoll(uv_poll_t* poll, int status, int /*events*/) {
    IcmpSocket* self = static_cast<IcmpSocket*>(poll->data);
    if (self != nullptr && self->pending_) self->OnReadable(status);
  }

  void OnReadable(int status) {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (status < 0) return Finish(ErrnoError(env, -status, "poll").Value(), 0);
    uint8_t buffer[2048];
    for (;;) {
      sockaddr_storage from{};
      socklen_t fromLen = sizeof from;
      ssize_t n = recvfrom(handle_->fd, buffer, sizeof buffer, 0, reinterpret_cast<sockaddr*>(&from), &fromLen);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        return Finish(ErrnoError(env, errno, "recvfrom").Value(), 0);
      }
      if (IsOurReply(buffer, size_t(n), from)) return Finish(env.Null(), double(uv_hrtime() - sentAt_) / 1e6);
    }
  }

  bool IsOurReply(const uint8_t* packet, size_t len, const sockaddr_storage& from) const {
    size_t offset = 0;
    if (raw_ && !v6_) {  // raw IPv4 delivers the IP header too; IPv6 and datagram sockets do not
      if (len < 20) return false;
      offset = size_t(packet[0] & 0x0f) * 4;
    }
    if (len < offset + kHeader) return false;
    const uint8_t* icmp = packet + offset;
    if (icmp[0] != (v6_ ? kEchoReply6 : kEchoReply4) || icmp[1] != 0) return false;
    if (((icmp[6] << 8) | icmp[7]) != sequence_) return false;
    // A datagram socket only gets replies to its own kernel-chosen id; a raw one gets everyone's.
    return !raw_ || (((icmp[4] << 8) | icmp[5]) == id_ && SameAddress(from, dest_));
  }

  void Finish(Napi::Value error, double rttMs) {
    uv_poll_stop(&handle_->poll);
    pending_ = false;
    Napi::Function done = done_.Value();
    done_.Reset();
    Napi::Env env = Env();
    done.MakeCallback(Value(), {error, Napi::Number::New(env, rttMs)}, context_);
    if (env.IsExceptionPending()) {
      Napi::Error thrown = env.GetAndClearPendingException();
      napi_fatal_exception(env, thrown.Value());
    }
    Unref();  // last: `this` may be collected once unreferenced
  }

  // Only an optimisation (IsOurReply checks every packet), so a refusal is ignored.
  static void FilterEchoReplies(int fd, bool v6) {
    if (!v6) {
      uint32_t blocked = ~(uint32_t(1) << kEchoReply4);
      setsockopt(fd, SOL_RAW, kIcmpFilter, &blocked, sizeof blocked);
    } else {
      icmp6_filter filter;
      ICMP6_FILTER_SETBLOCKALL(&filter);
      ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
      setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter);
    }
  }

  Napi::AsyncContext context_;
  Napi::FunctionReference done_;
  PollHandle* handle_ = nullptr;
  sockaddr_storage dest_{};
  uint64_t sentAt_ = 0;
  uint16_t id_ = 0, sequence_ = 0;
  bool v6_ = false, raw_ = false, pending_ = false;
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("IcmpSocket", IcmpSocket::Define(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(keepwatch_ping, Init)
