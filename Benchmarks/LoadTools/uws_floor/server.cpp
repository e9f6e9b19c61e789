// uws_floor: the single-process floor for Socket.IO room fan-out on this machine.
//
// A minimal Socket.IO v5 / Engine.IO v4 server (WebSocket transport only) on
// uWebSockets, one process, one thread, no Redis. It speaks exactly what
// sioload needs in peer mode and what ../peer_python/server.py does:
//
//   open          0{"sid":..,"upgrades":[],"pingTimeout":20000,"pingInterval":25000,"maxPayload":1000000}
//   40{auth}      -> 40{"sid":..} if auth is an object with a truthy "token",
//                    else 44{"message":"Connection rejected by server"}; 44"Unable to connect" when the
//                    namespace is not "/" or is connected already
//   42<id>["room:join",{"roomId":R}]       -> subscribe to topic R, ack 43<id>[true] ([false] without roomId)
//   42<id>["bench:publish",{"roomId":R,..}] -> 42["bench:message",{same bytes}] to every member of R,
//                                             sender included (app.publish, not ws->publish); ack 43<id>[] if asked
//   41            -> leave every room (Socket.IO disconnect; the WebSocket stays open)
//   server pings  "2" every pingInterval per socket (25 buckets, one per second); the client's "3"
//                 resets uWS's idle timer, and a socket silent for pingInterval+pingTimeout (+4 s of
//                 uWS timer granularity) is closed
//   client "2"    -> "3" (same payload; python-engineio 4 ignores client pings);  "1" -> close;  "5" -> "6"
//
//   uws_floor --port P [--host 127.0.0.1] [--ping-interval 25] [--ping-timeout 20]
//
// On SIGTERM/SIGINT it prints one line to stderr and exits within 1 s: publishes, deliveries, and
// its own CPU time (ns clock) from the first bench:publish to the loop iteration after the last
// one was flushed ("window"), a finer figure than /proc's 10 ms ticks.
#include "App.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

using std::string_view;
static constexpr size_t NPOS = string_view::npos;

struct PerSocket { bool connected = false; };
using WS = uWS::WebSocket<false, true, PerSocket>;

static uWS::App *app;
static unsigned pingInterval = 25, pingTimeout = 20, tick = 0;
static unsigned long long opened, publishes, deliveries;
static volatile sig_atomic_t stopRequested = 0;
static us_listen_socket_t *listenSocket;
static std::string frame;  // reused for every outgoing event
static double cpuFirst = -1, cpuLast = -1;  // process CPU at the first publish / after the last flush
static bool flushPending = false;

static double cpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static std::string pingTopic(unsigned bucket) { return "\x01" "eio-ping:" + std::to_string(bucket); }

// Random-looking 20-char base64url ids, the length of python-engineio's generate_id().
static std::string newId() {
  static unsigned long long s = 0x9e3779b97f4a7c15ULL ^ ((unsigned long long) getpid() << 32) ^ (unsigned long long) time(nullptr);
  static const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string id(20, 'A');
  for (int half = 0; half < 2; half++) {
    unsigned long long z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL; z ^= z >> 31;
    for (int k = 0; k < 10; k++, z >>= 6) id[half * 10 + k] = abc[z & 63];
  }
  return id;
}

// ---- just enough JSON: spans of values, members of an object, nothing decoded
static size_t skipWs(string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
  return i;
}
static size_t skipValue(string_view s, size_t i) {  // index after the value at i, NPOS if malformed
  i = skipWs(s, i);
  if (i >= s.size()) return NPOS;
  if (s[i] == '"') {
    for (i++; i < s.size(); i++) {
      if (s[i] == '\\') i++;
      else if (s[i] == '"') return i + 1;
    }
    return NPOS;
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      char c = s[i];
      if (c == '"') { if ((i = skipValue(s, i)) == NPOS) return NPOS; continue; }
      if (c == '{' || c == '[') depth++;
      else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      i++;
    }
    return NPOS;
  }
  size_t b = i;
  while (i < s.size() && !strchr(",:]} \t\r\n", s[i])) i++;
  return i > b ? i : NPOS;
}
static string_view member(string_view obj, string_view key) {  // raw value of obj[key], empty if none
  size_t i = skipWs(obj, 0);
  if (i >= obj.size() || obj[i] != '{') return {};
  for (i = skipWs(obj, i + 1); i < obj.size() && obj[i] == '"'; i = skipWs(obj, i + 1)) {
    size_t ke = skipValue(obj, i);
    if (ke == NPOS) return {};
    string_view k = obj.substr(i + 1, ke - i - 2);
    i = skipWs(obj, ke);
    if (i >= obj.size() || obj[i] != ':') return {};
    size_t vs = skipWs(obj, i + 1), ve = skipValue(obj, vs);
    if (ve == NPOS) return {};
    if (k == key) return obj.substr(vs, ve - vs);
    i = skipWs(obj, ve);
    if (i >= obj.size() || obj[i] != ',') return {};
  }
  return {};
}
static bool truthy(string_view v) {  // Python truthiness of a raw JSON value
  return !(v.empty() || v == "\"\"" || v == "0" || v == "false" || v == "null" || v == "[]" || v == "{}" ||
           v == "0.0" || v == "-0");
}
static string_view stringValue(string_view v) {  // contents of a JSON string (escapes kept as is)
  return (v.size() >= 3 && v.front() == '"' && v.back() == '"') ? v.substr(1, v.size() - 2) : string_view{};
}

static void sendAck(WS *ws, string_view id, string_view body) {
  if (id.empty()) return;
  std::string a = "43";
  a.append(id).append(body);
  ws->send(a, uWS::OpCode::TEXT);
}

static void leaveAllRooms(WS *ws) {
  std::vector<std::string> rooms;
  ws->iterateTopics([&](string_view t) { if (t.empty() || t[0] != '\x01') rooms.emplace_back(t); });
  for (auto &r : rooms) ws->unsubscribe(r);
}

static void onSocketIO(WS *ws, string_view p) {  // p = Socket.IO packet (after the Engine.IO '4')
  if (p.empty()) return;
  char type = p[0];
  p.remove_prefix(1);
  string_view ns = "/";
  if (!p.empty() && p[0] == '/') {
    size_t c = p.find(',');
    ns = p.substr(0, c);
    p = c == NPOS ? string_view{} : p.substr(c + 1);
  }
  PerSocket *ps = ws->getUserData();
  if (type == '0') {  // CONNECT
    if (ns != "/" || ps->connected) {  // unknown namespace, or connected already: as python-socketio
      std::string e = "44";
      if (ns != "/") e.append(ns).push_back(',');
      e.append("\"Unable to connect\"");
      ws->send(e, uWS::OpCode::TEXT);
    } else if (truthy(member(p, "token"))) {
      ps->connected = true;
      ws->send("40{\"sid\":\"" + newId() + "\"}", uWS::OpCode::TEXT);
    } else {
      ws->send("44{\"message\":\"Connection rejected by server\"}", uWS::OpCode::TEXT);
    }
    return;
  }
  if (ns != "/" || !ps->connected) return;  // python-socketio ignores packets for unconnected namespaces
  if (type == '1') {  // DISCONNECT
    ps->connected = false;
    leaveAllRooms(ws);
    return;
  }
  if (type != '2') return;  // only EVENTs are handled (ACKs from clients, binary packets: ignored)
  size_t d = 0;
  while (d < p.size() && p[d] >= '0' && p[d] <= '9') d++;
  string_view ackId = p.substr(0, d), body = p.substr(d);
  size_t i = skipWs(body, 0);
  if (i >= body.size() || body[i] != '[') return;
  size_t ns_ = skipWs(body, i + 1), ne = skipValue(body, ns_);
  if (ne == NPOS) return;
  string_view name = stringValue(body.substr(ns_, ne - ns_));
  string_view data;
  size_t c = skipWs(body, ne);
  if (c < body.size() && body[c] == ',') {
    size_t vs = skipWs(body, c + 1), ve = skipValue(body, vs);
    if (ve != NPOS) data = body.substr(vs, ve - vs);
  }
  // roomId: python uses any truthy value as the room; here a string's raw contents, else the raw token
  string_view room = member(data, "roomId");
  string_view r = !truthy(room) ? string_view{} : room.front() == '"' ? stringValue(room) : room;
  if (name == "room:join") {
    if (!r.empty()) ws->subscribe(r);
    sendAck(ws, ackId, r.empty() ? "[false]" : "[true]");
  } else if (name == "bench:publish") {
    if (!r.empty()) {
      frame.assign("42[\"bench:message\",").append(data).push_back(']');
      if (cpuFirst < 0) cpuFirst = cpuNow();
      flushPending = true;
      publishes++;
      deliveries += app->numSubscribers(r);
      app->publish(r, frame, uWS::OpCode::TEXT, false);  // app->publish: the sender gets it too
    }
    sendAck(ws, ackId, "[]");  // the handler returns None
  }
}

static void onTick(us_timer_t *) {
  if (stopRequested) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double w = cpuLast - cpuFirst;
    fprintf(stderr, "uws_floor: stopping: %llu sockets opened, %llu publishes, %llu deliveries queued, "
            "window cpu %.6fs = %.3f us/delivery, total cpu user %.3fs sys %.3fs\n",
            opened, publishes, deliveries, cpuFirst < 0 ? 0.0 : w, deliveries && cpuFirst >= 0 ? w * 1e6 / (double) deliveries : 0.0,
            (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6,
            (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec / 1e6);
    _exit(0);
  }
  tick++;
  app->publish(pingTopic(tick % pingInterval), "2", uWS::OpCode::TEXT, false);  // Engine.IO server ping
}

int main(int argc, char **argv) {
  std::string host = "127.0.0.1";
  int port = 0;
  for (int k = 1; k + 1 < argc; k += 2) {
    string_view a = argv[k];
    if (a == "--port") port = atoi(argv[k + 1]);
    else if (a == "--host") host = argv[k + 1];
    else if (a == "--ping-interval") pingInterval = (unsigned) atoi(argv[k + 1]);
    else if (a == "--ping-timeout") pingTimeout = (unsigned) atoi(argv[k + 1]);
    else { fprintf(stderr, "usage: %s --port P [--host H] [--ping-interval S] [--ping-timeout S]\n", argv[0]); return 2; }
  }
  if (port <= 0 || pingInterval < 1 || pingInterval + pingTimeout + 4 > 960) {
    fprintf(stderr, "usage: %s --port P [--host H] [--ping-interval S] [--ping-timeout S]\n", argv[0]);
    return 2;
  }
  struct rlimit rl;  // as many sockets as the hard limit allows
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) { rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl); }
  signal(SIGPIPE, SIG_IGN);
  auto onSignal = [](int) { if (stopRequested) _exit(1); stopRequested = 1; };
  signal(SIGTERM, onSignal);
  signal(SIGINT, onSignal);

  uWS::App a;
  app = &a;
  const std::string open = "0{\"sid\":\"%s\",\"upgrades\":[],\"pingTimeout\":" + std::to_string(pingTimeout * 1000) +
                           ",\"pingInterval\":" + std::to_string(pingInterval * 1000) + ",\"maxPayload\":1000000}";
  // uWS times sockets out in 4 s ticks (after idle-4..idle s): +4 so none goes before python-engineio would
  unsigned short idle = (unsigned short) (pingInterval + pingTimeout + 4);
  a.ws<PerSocket>("/socket.io/*", {
    .compression = uWS::DISABLED,
    .maxPayloadLength = 1000000,    // python-engineio's maxPayload
    .idleTimeout = idle,            // no "3" for pingInterval + pingTimeout: closed
    .maxBackpressure = 0,           // never drop (python buffers without limit too)
    .closeOnBackpressureLimit = false,
    .resetIdleTimeoutOnSend = false,
    .sendPingsAutomatically = false,  // Engine.IO pings only, no WebSocket-level pings
    .open = [&open](WS *ws) {
      opened++;
      ws->subscribe(pingTopic(tick % pingInterval));  // pinged pingInterval seconds from now, then every pingInterval
      std::string o = open;
      o.replace(o.find("%s"), 2, newId());
      ws->send(o, uWS::OpCode::TEXT);
    },
    .message = [](WS *ws, string_view m, uWS::OpCode op) {
      if (op != uWS::OpCode::TEXT || m.empty()) return;
      switch (m[0]) {
        case '4': onSocketIO(ws, m.substr(1)); break;
        case '2': { std::string pong(m); pong[0] = '3'; ws->send(pong, uWS::OpCode::TEXT); break; }  // client ping
        case '1': ws->end(1000); break;                                                               // Engine.IO close
        case '5': ws->send("6", uWS::OpCode::TEXT); break;                                            // upgrade -> noop
        default: break;                                                                               // '3' pong, '6' noop
      }
    },
  }).get("/*", [](auto *res, auto *req) {
    if (req->getUrl() == "/readyz") res->end("ok");
    else res->writeStatus("400 Bad Request")->end("{\"code\":3,\"message\":\"Bad request: WebSocket transport only\"}");
  }).listen(host, port, [&](us_listen_socket_t *ls) {
    listenSocket = ls;
    if (ls) fprintf(stderr, "uws_floor: listening on %s:%d pid=%d\n", host.c_str(), port, getpid());
  });
  if (!listenSocket) { fprintf(stderr, "uws_floor: cannot listen on %s:%d\n", host.c_str(), port); return 1; }
  // Pre handlers run before epoll_wait, i.e. after the previous iteration's post handlers (which flush
  // the pub/sub batches): the CPU clock read here includes the writes of the last publish.
  uWS::Loop::get()->addPreHandler(&cpuLast, [](uWS::Loop *) {
    if (flushPending) { cpuLast = cpuNow(); flushPending = false; }
  });
  us_timer_t *t = us_create_timer((us_loop_t *) uWS::Loop::get(), 0, 0);
  us_timer_set(t, onTick, 1000, 1000);
  a.run();
  return 0;
}
