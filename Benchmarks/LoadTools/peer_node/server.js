#!/usr/bin/env node
// Reference peer: the Node.js Socket.IO server (socket.io 4 + the Redis
// adapter @socket.io/redis-adapter on node-redis 4), relaying room events
// through Redis, for benchmarking with sioload. Same behaviour as
// ../peer_python/server.py.
//
//   node server.js PORT [--host H] [--redis URL] [--ping-interval S]
//                       [--ping-timeout S] [--backlog N] [--jwt-secret S]
//
// Handlers:
//   connect (middleware)  accepts any auth object carrying a "token" (with
//                         --jwt-secret: an HS256 JWT signed with it, not
//                         expired, as an app would check it), else
//                         44{"message":"Connection rejected by server"}
//   "room:join"   {roomId}       socket.join(roomId); ack true (false without roomId)
//   "bench:publish" {roomId,...} emit "bench:message" with the same payload to
//                                the room, sender included (ack [] if asked)
//
// Run two or more on different ports against the same Redis: an emit on one
// node is delivered to its local room members and published once on the
// Redis channel "socket.io#/#<room>#"; every other node (pattern subscription
// "socket.io#/#*") delivers it to its own members.
//
// Modules come from $PEER_NODE_MODULES, default $BENCH/peer_node/node_modules
// (BENCH=/tmp/bench), brought from outside (../README.md); nothing of them is kept in
// this repository.
"use strict";
const path = require("path");
const http = require("http");
const crypto = require("crypto");
const { createRequire } = require("module");

function usage(msg) {
  if (msg) console.error("server.js: " + msg);
  console.error("usage: node server.js PORT [--host H] [--redis URL] " +
    "[--ping-interval S] [--ping-timeout S] [--backlog N] [--jwt-secret S]");
  process.exit(2);
}

function parseArgs(argv) {
  const a = { port: null, host: "127.0.0.1", redis: "redis://127.0.0.1:6379/0",
    pingInterval: 25, pingTimeout: 20, backlog: 4096, jwtSecret: null };
  const num = (k, v) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < 0) usage(`bad value for ${k}: ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    let k = argv[i], v;
    if (k.startsWith("--") && k.includes("=")) { [k, v] = [k.slice(0, k.indexOf("=")), k.slice(k.indexOf("=") + 1)]; }
    const next = () => (v !== undefined ? v : argv[++i]);
    switch (k) {
      case "--host": a.host = next(); break;
      case "--redis": a.redis = next(); break;
      case "--ping-interval": a.pingInterval = num(k, next()); break;
      case "--ping-timeout": a.pingTimeout = num(k, next()); break;
      case "--backlog": a.backlog = Math.floor(num(k, next())); break;
      case "--jwt-secret": a.jwtSecret = next(); break;
      case "-h": case "--help": usage();
      default:
        if (k.startsWith("-") || a.port !== null) usage(`unexpected argument ${k}`);
        a.port = Math.floor(num("PORT", k));
    }
  }
  if (a.port === null) usage("PORT missing");
  return a;
}

const args = parseArgs(process.argv.slice(2));

// An HS256 JWT's claims when its signature is good and it has not expired, else null: what
// an app's middleware does with the usual library (header, signature in constant time, exp).
function verifyJWT(token, secret) {
  if (typeof token !== "string") return null;
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const header = JSON.parse(Buffer.from(parts[0], "base64url").toString("utf8"));
    if (header === null || header.alg !== "HS256") return null;
    const expected = crypto.createHmac("sha256", secret).update(parts[0] + "." + parts[1]).digest();
    const given = Buffer.from(parts[2], "base64url");
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
    const claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    if (claims === null || typeof claims !== "object") return null;
    if (typeof claims.exp === "number" && claims.exp * 1000 <= Date.now()) return null;
    return claims;
  } catch (_) {
    return null;
  }
}
const modulesDir = process.env.PEER_NODE_MODULES ||
  path.join(process.env.BENCH || "/tmp/bench", "peer_node", "node_modules");
// resolve as a file sitting next to that node_modules folder would
const req = createRequire(path.join(path.dirname(modulesDir), "peer_node_server.js"));
let Server, createAdapter, createClient;
try {
  ({ Server } = req("socket.io"));
  ({ createAdapter } = req("@socket.io/redis-adapter"));
  ({ createClient } = req("redis"));
} catch (e) {
  console.error(`server.js: cannot load modules from ${modulesDir} (set PEER_NODE_MODULES: Benchmarks/LoadTools/README.md): ${e.message}`);
  process.exit(1);
}
const ver = (n) => {
  try {
    return JSON.parse(require("fs").readFileSync(path.join(modulesDir, n, "package.json"), "utf8")).version;
  } catch (_) { return "?"; }
};

async function main() {
  const pubClient = createClient({ url: args.redis });
  const subClient = pubClient.duplicate();
  for (const [name, c] of [["pub", pubClient], ["sub", subClient]]) {
    c.on("error", (err) => console.error(`redis ${name} client error: ${err.message}`));
  }
  await Promise.all([pubClient.connect(), subClient.connect()]);

  const httpServer = http.createServer();
  const io = new Server(httpServer, {
    adapter: createAdapter(pubClient, subClient),
    cors: { origin: "*" },
    serveClient: false,
    transports: ["websocket", "polling"],
    pingInterval: Math.round(args.pingInterval * 1000),
    pingTimeout: Math.round(args.pingTimeout * 1000),
    maxHttpBufferSize: 1e6,
  });

  io.use((socket, next) => {
    const auth = socket.handshake.auth;
    if (auth === null || typeof auth !== "object" || Array.isArray(auth) || !auth.token) {
      return next(new Error("Connection rejected by server"));
    }
    if (args.jwtSecret !== null) {
      const claims = verifyJWT(auth.token, args.jwtSecret);
      if (claims === null) return next(new Error("Connection rejected by server"));
      socket.data.user = claims.sub;
    }
    next();
  });

  io.on("connection", (socket) => {
    socket.on("room:join", (data, ack) => {
      const room = data !== null && typeof data === "object" ? data.roomId : undefined;
      if (!room) {
        if (typeof ack === "function") ack(false);
        return;
      }
      socket.join(room);
      if (typeof ack === "function") ack(true);
    });

    socket.on("bench:publish", (data, ack) => {
      const room = data !== null && typeof data === "object" ? data.roomId : undefined;
      if (room) io.to(room).emit("bench:message", data);
      if (typeof ack === "function") ack(); // python-socketio acks None as []
    });
  });

  await new Promise((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen({ port: args.port, host: args.host, backlog: args.backlog }, resolve);
  });
  console.error(`peer_node socket.io ${ver("socket.io")} engine.io ${ver("engine.io")} ` +
    `ws ${ver("ws")} redis-adapter ${ver("@socket.io/redis-adapter")} redis ${ver("redis")} ` +
    `node ${process.version} pid=${process.pid} port=${args.port}`);

  let closing = false;
  const shutdown = (sig) => {
    if (closing) return;
    closing = true;
    // give up after 10 s (a node holding ~20k sockets closes them one by one)
    setTimeout(() => process.exit(0), 10000).unref();
    io.close(() => {
      Promise.allSettled([pubClient.quit(), subClient.quit()]).then(() => process.exit(0));
    });
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

main().catch((err) => {
  console.error(`server.js: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
