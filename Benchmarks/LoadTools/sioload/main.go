// sioload: a load generator for Socket.IO v5 (Engine.IO v4) gateways,
// WebSocket transport only.
//
// It opens N client connections spread round-robin over one or more gateway
// URLs, authenticates each one with `40{"token":"user-<i>"}` (or an HS256 JWT
// with -jwt-secret), joins each connection to one of R rooms with a `room:join`
// event, and then lets P of them publish timestamped events at a fixed rate.
// Every connection records the latency (now - ts) of every room event it
// receives. The result is one JSON line on stdout plus a human summary on
// stderr.
//
// With -idle it only opens (and optionally joins) N connections, keeps them
// alive (answering Engine.IO pings) for -duration, and reports how many stayed
// up together with the resident memory of the server processes (-server-pid).
//
// With -setup roomcast it speaks Roomcast's contract (real users, rooms with
// server ids, JWT auth): it registers users over REST, creates rooms (first
// member creates), connects every socket with its user's JWT and joins the
// room by its server id, then runs -scenario chat (message:send ->
// message:new to every member, sender included) or drag (element:create once
// per publisher, then element:update moves -> element:updated; latency of the
// other member). Deliveries are counted per publish and per recipient kind, so
// lost and duplicated events are exact. -redis-pid reports Redis CPU apart
// (per publish and per delivery).
//
// With -storm it runs a reconnect storm instead (storm.go): every socket on
// one node, that node killed with SIGKILL, every socket reconnecting to the
// survivor and joining its room again while some rooms keep their traffic.
//
// Build (GOPATH mode, Debian's golang-go + golang-github-gorilla-websocket-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode:/tmp/gopath \
//	  go build -o /tmp/bench/bin/sioload Benchmarks/LoadTools/sioload/*.go
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

// ---------------------------------------------------------------- config

type config struct {
	urls           []string
	conns          int
	rooms          int
	roomPrefix     string
	publishers     int
	rate           float64
	duration       time.Duration
	event          string
	recvEvent      string
	joinEvent      string
	joinAck        bool
	joinTimeout    time.Duration
	size           int
	includeSender  bool
	token          string
	authKey        string
	authJSON       string
	noAuth         bool
	namespace      string
	idle           bool
	idleJoin       bool
	serverPids     []int
	srcIPs         string
	perIP          int
	connConc       int
	connRate       float64
	connTimeout    time.Duration
	settle         time.Duration
	drain          time.Duration
	report         time.Duration
	rbuf, wbuf     int
	outFile        string
	label          string
	tsScheduled    bool
	quiet          bool
	stopOnConnFail bool
	redisPids      []int

	// -setup roomcast
	setup         string   // "peer" (bench:publish relay) or "roomcast" (register, rooms, JWT)
	apiURLs       []string // REST base URLs (http://host:port)
	scenario      string   // roomcast: "chat" (message:send -> message:new) or "drag" (element:update -> element:updated)
	members       int      // roomcast: members per room (sets -rooms = ceil(conns/members))
	users         int      // roomcast: distinct users to register (connections reuse them round-robin)
	userPrefix    string   // roomcast: username prefix (unique per run)
	password      string
	apiConc       int
	apiTimeout    time.Duration
	roomBody      string // auto | participants | other
	roomWithSelf  bool   // include the creator in participantIds
	dragY         float64
	createTimeout time.Duration
	saveUsers     string // write the registered users (id, token, username) here
	loadUsers     string // use these users instead of registering

	jwtSecret string // peer mode: send an HS256 JWT (sub = the -token template) instead of the bare token

	// -storm (storm.go)
	storm           bool
	stormURLs       []string      // the survivor(s): publishers connect here, every socket reconnects here
	stormKillPid    int           // the node holding the sockets, killed with SIGKILL
	stormRooms      int           // rooms that keep traffic during the storm (one publisher each)
	stormBefore     time.Duration // traffic before the kill
	stormAfter      time.Duration // traffic after the last rejoin: the survivor's and Redis's baseline CPU
	stormTimeout    time.Duration // the longest wait, from the kill, for every socket to be back
	stormDelay      time.Duration // first reconnection delay, doubled per failed attempt
	stormDelayMax   time.Duration
	stormJitter     float64 // randomization of each delay, as a fraction of it
	stormNoRecovery bool    // roomcast: rejoin without since
}

var cfg config

// ---------------------------------------------------------------- histogram
// Log-linear histogram over microseconds: exact below 1024 us, then 512
// sub-buckets per power of two (<0.2% relative error). Lock-free.

const (
	histLinear  = 1024
	histSub     = 512
	histBuckets = histLinear + 54*histSub
)

type histogram struct {
	counts [histBuckets]uint64
	n      uint64
	sum    uint64
	max    int64
}

func bucketOf(us int64) int {
	if us < 0 {
		us = 0
	}
	if us < histLinear {
		return int(us)
	}
	l := bits.Len64(uint64(us)) // >= 11
	shift := l - 10
	m := int(us >> uint(shift)) // 512..1023
	idx := histLinear + (shift-1)*histSub + (m - histSub)
	if idx >= histBuckets {
		idx = histBuckets - 1
	}
	return idx
}

// bucketValue returns the midpoint of bucket idx, in microseconds.
func bucketValue(idx int) float64 {
	if idx < histLinear {
		return float64(idx)
	}
	shift := (idx-histLinear)/histSub + 1
	m := (idx-histLinear)%histSub + histSub
	lo := float64(int64(m) << uint(shift))
	return lo + float64(int64(1)<<uint(shift))/2
}

func (h *histogram) record(ns int64) {
	us := ns / 1000
	if us < 0 {
		us = 0
	}
	atomic.AddUint64(&h.counts[bucketOf(us)], 1)
	atomic.AddUint64(&h.n, 1)
	atomic.AddUint64(&h.sum, uint64(us))
	for {
		old := atomic.LoadInt64(&h.max)
		if us <= old || atomic.CompareAndSwapInt64(&h.max, old, us) {
			break
		}
	}
}

// quantile returns the q-quantile in milliseconds.
func (h *histogram) quantile(q float64) float64 {
	n := atomic.LoadUint64(&h.n)
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	if rank < 1 {
		rank = 1
	}
	var acc uint64
	for i := 0; i < histBuckets; i++ {
		acc += atomic.LoadUint64(&h.counts[i])
		if acc >= rank {
			v := bucketValue(i)
			if mx := float64(atomic.LoadInt64(&h.max)); v > mx {
				v = mx
			}
			return v / 1000
		}
	}
	return float64(atomic.LoadInt64(&h.max)) / 1000
}

func (h *histogram) meanMs() float64 {
	n := atomic.LoadUint64(&h.n)
	if n == 0 {
		return 0
	}
	return float64(atomic.LoadUint64(&h.sum)) / float64(n) / 1000
}

// ---------------------------------------------------------------- global stats

var (
	latHist     histogram
	recvCount   atomic.Int64 // matching room events received
	recvOther   atomic.Int64 // other events / packets received
	recvBytes   atomic.Int64
	pingCount   atomic.Int64
	pubSent     atomic.Int64
	pubErrors   atomic.Int64
	expected    atomic.Int64
	disconnects atomic.Int64
	maxPubLagNs atomic.Int64
	joinAcked   atomic.Int64
	joinSent    atomic.Int64
	connectOK   atomic.Int64
	connectFail atomic.Int64
	eioOpenOnce sync.Once
	eioOpen     map[string]interface{}
	errKindsMu  sync.Mutex
	errKinds    = map[string]int{}
	errExamples = map[string]string{}
	discKinds   = map[string]int{}
	running     atomic.Bool // true while publishing/draining (latency recording window)
	stopping    atomic.Bool // true while we are closing connections ourselves
)

func addErrKind(m map[string]int, k string) {
	errKindsMu.Lock()
	m[k]++
	errKindsMu.Unlock()
}

// ---------------------------------------------------------------- client

type client struct {
	id       int
	url      string
	room     int
	ws       *websocket.Conn
	wmu      sync.Mutex
	alive    atomic.Bool
	joined   bool
	ackCh    chan ackMsg
	connTime time.Duration
	sid      string
	lastPing atomic.Int64
	token    string      // -setup roomcast: the JWT of this connection's user (any mode: sent as the token)
	roomID   string      // -setup roomcast: the server's id of room c.room
	member   atomic.Bool // -setup roomcast: the join was acked without error
	storm    *stormSocket
}

// ackMsg is a Socket.IO ACK packet: its id and (roomcast mode only) a copy of
// its JSON array body.
type ackMsg struct {
	id   int
	body []byte
}

func (c *client) write(msg []byte) error {
	c.wmu.Lock()
	err := c.ws.WriteMessage(websocket.TextMessage, msg)
	c.wmu.Unlock()
	return err
}

func nsPrefix() string {
	if cfg.namespace == "" || cfg.namespace == "/" {
		return ""
	}
	return cfg.namespace + ","
}

// auth is the CONNECT packet's payload for this connection.
func (c *client) auth() string {
	if c.token != "" && !cfg.noAuth {
		b, _ := json.Marshal(map[string]string{cfg.authKey: c.token})
		return string(b)
	}
	return authPayload(c.id)
}

func authPayload(i int) string {
	if cfg.noAuth {
		return ""
	}
	if tok := clientToken(i); tok != "" {
		b, _ := json.Marshal(map[string]string{cfg.authKey: tok})
		return string(b)
	}
	if cfg.authJSON != "" {
		if strings.Contains(cfg.authJSON, "%d") {
			return fmt.Sprintf(cfg.authJSON, i)
		}
		return cfg.authJSON
	}
	b, _ := json.Marshal(map[string]string{cfg.authKey: peerToken(i)})
	return string(b)
}

// peerToken is connection i's token in peer mode: the -token template, or with -jwt-secret an
// HS256 JWT whose subject is that template.
func peerToken(i int) string {
	tok := cfg.token
	if strings.Contains(tok, "%d") {
		tok = fmt.Sprintf(tok, i)
	}
	if cfg.jwtSecret != "" {
		return mintJWT(cfg.jwtSecret, tok, time.Now())
	}
	return tok
}

// mintJWT returns an HS256 JWT for subject sub, valid for a day.
func mintJWT(secret, sub string, now time.Time) string {
	enc := base64.RawURLEncoding
	claims, _ := json.Marshal(map[string]interface{}{"sub": sub, "iat": now.Unix(), "exp": now.Add(24 * time.Hour).Unix()})
	signed := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signed))
	return signed + "." + enc.EncodeToString(mac.Sum(nil))
}

func classifyErr(err error) string {
	if err == nil {
		return "none"
	}
	var ne net.Error
	s := err.Error()
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "conn_refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "conn_reset"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "addr_not_avail"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "too_many_files"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.HasPrefix(s, "sio:"):
		return strings.SplitN(s, " ", 2)[0]
	case strings.Contains(s, "bad handshake"):
		return "ws_bad_handshake"
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return "ws_close_" + strconv.Itoa(ce.Code)
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

var srcAddrs []*net.TCPAddr

func dialerFor(i int) *websocket.Dialer {
	nd := &net.Dialer{Timeout: cfg.connTimeout}
	if len(srcAddrs) > 0 {
		// conns are spread round-robin over the URLs; count per URL.
		perURL := i / len(cfg.urls)
		nd.LocalAddr = srcAddrs[(perURL/cfg.perIP)%len(srcAddrs)]
		// Defer the ephemeral port choice to connect() so the (src,dst)
		// 4-tuple, not the source address alone, must be unique.
		nd.Control = func(network, address string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, 24 /* IP_BIND_ADDRESS_NO_PORT */, 1)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	return &websocket.Dialer{
		NetDialContext:   nd.DialContext,
		HandshakeTimeout: cfg.connTimeout,
		ReadBufferSize:   cfg.rbuf,
		WriteBufferSize:  cfg.wbuf,
	}
}

// connect performs WebSocket + Engine.IO + Socket.IO handshakes.
func (c *client) connect(ctx context.Context) error {
	t0 := time.Now()
	d := dialerFor(c.id)
	ws, resp, err := d.DialContext(ctx, c.url, nil)
	if err != nil {
		if resp != nil {
			return fmt.Errorf("sio:http_%d %v", resp.StatusCode, err)
		}
		return err
	}
	c.ws = ws
	ws.SetReadDeadline(time.Now().Add(cfg.connTimeout))
	// 1. Engine.IO open packet: 0{"sid":...,"pingInterval":...}
	_, msg, err := ws.ReadMessage()
	if err != nil {
		ws.Close()
		return err
	}
	if len(msg) == 0 || msg[0] != '0' {
		ws.Close()
		return fmt.Errorf("sio:bad_open %q", trunc(msg))
	}
	eioOpenOnce.Do(func() {
		var m map[string]interface{}
		if json.Unmarshal(msg[1:], &m) == nil {
			eioOpen = m
		}
	})
	// 2. Socket.IO CONNECT with auth payload.
	connectPkt := "40" + nsPrefix() + c.auth()
	if cfg.namespace != "" && cfg.namespace != "/" && cfg.noAuth {
		connectPkt = "40" + cfg.namespace + ","
	}
	if err := c.write([]byte(connectPkt)); err != nil {
		ws.Close()
		return err
	}
	// 3. Wait for 40{"sid":...} (answer pings meanwhile).
	for {
		_, msg, err = ws.ReadMessage()
		if err != nil {
			ws.Close()
			return err
		}
		if len(msg) == 0 {
			continue
		}
		switch msg[0] {
		case '2':
			c.write(append([]byte{'3'}, msg[1:]...))
			continue
		case '6':
			continue
		case '1':
			ws.Close()
			return fmt.Errorf("sio:eio_close")
		case '4':
			if len(msg) >= 2 && msg[1] == '0' {
				body := msg[2:]
				if p := nsPrefix(); p != "" && bytes.HasPrefix(body, []byte(p)) {
					body = body[len(p):]
				}
				var r struct {
					Sid string `json:"sid"`
				}
				json.Unmarshal(body, &r)
				c.sid = r.Sid
				goto connected
			}
			if len(msg) >= 2 && msg[1] == '4' {
				ws.Close()
				return fmt.Errorf("sio:connect_error %s", trunc(msg[2:]))
			}
			continue
		default:
			continue
		}
	}
connected:
	ws.SetReadDeadline(time.Time{})
	c.connTime = time.Since(t0)
	c.alive.Store(true)
	c.lastPing.Store(time.Now().UnixNano())
	return nil
}

func trunc(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

// readLoop consumes frames until the connection dies.
func (c *client) readLoop(wg *sync.WaitGroup) {
	defer wg.Done()
	var buf bytes.Buffer
	recvEv := []byte(cfg.recvEvent)
	ns := []byte(nsPrefix())
	for {
		mt, r, err := c.ws.NextReader()
		if err != nil {
			if c.alive.Swap(false) && !stopping.Load() {
				disconnects.Add(1)
				addErrKind(discKinds, classifyErr(err))
			}
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			if c.alive.Swap(false) && !stopping.Load() {
				disconnects.Add(1)
				addErrKind(discKinds, classifyErr(err))
			}
			return
		}
		now := time.Now().UnixNano()
		msg := buf.Bytes()
		recvBytes.Add(int64(len(msg)))
		if mt != websocket.TextMessage || len(msg) == 0 {
			recvOther.Add(1)
			continue
		}
		switch msg[0] {
		case '2': // ping -> pong (echo any probe payload)
			pingCount.Add(1)
			c.lastPing.Store(now)
			pong := make([]byte, len(msg))
			copy(pong, msg)
			pong[0] = '3'
			if err := c.write(pong); err != nil {
				if c.alive.Swap(false) && !stopping.Load() {
					disconnects.Add(1)
					addErrKind(discKinds, "pong_write_"+classifyErr(err))
				}
				return
			}
		case '1': // engine.io close
			if c.alive.Swap(false) && !stopping.Load() {
				disconnects.Add(1)
				addErrKind(discKinds, "eio_close")
			}
			c.ws.Close()
			return
		case '4':
			if len(msg) < 2 {
				continue
			}
			body := msg[2:]
			if len(ns) > 0 && bytes.HasPrefix(body, ns) {
				body = body[len(ns):]
			}
			switch msg[1] {
			case '2': // EVENT
				// skip optional ack id
				for len(body) > 0 && body[0] >= '0' && body[0] <= '9' {
					body = body[1:]
				}
				if c.storm != nil {
					stormEvent(c, body, now)
				} else if rcMode {
					rcEvent(c, body, now)
				} else if ts, ok := matchEvent(body, recvEv); ok {
					recvCount.Add(1)
					latHist.record(now - ts)
				} else {
					recvOther.Add(1)
				}
			case '3': // ACK
				id := 0
				for len(body) > 0 && body[0] >= '0' && body[0] <= '9' {
					id = id*10 + int(body[0]-'0')
					body = body[1:]
				}
				a := ackMsg{id: id}
				if rcMode || cfg.storm {
					a.body = append([]byte(nil), body...)
				}
				select {
				case c.ackCh <- a:
				default:
				}
			case '1': // DISCONNECT from server
				if c.alive.Swap(false) && !stopping.Load() {
					disconnects.Add(1)
					addErrKind(discKinds, "sio_disconnect")
				}
				c.ws.Close()
				return
			default:
				recvOther.Add(1)
			}
		default:
			recvOther.Add(1)
		}
	}
}

// matchEvent checks `["<name>",{... "ts":<int> ...}]` and returns ts.
func matchEvent(body, name []byte) (int64, bool) {
	i := 0
	for i < len(body) && (body[i] == ' ') {
		i++
	}
	if i >= len(body) || body[i] != '[' {
		return 0, false
	}
	i++
	for i < len(body) && body[i] == ' ' {
		i++
	}
	if i >= len(body) || body[i] != '"' {
		return 0, false
	}
	i++
	if !bytes.HasPrefix(body[i:], name) || i+len(name) >= len(body) || body[i+len(name)] != '"' {
		return 0, false
	}
	rest := body[i+len(name)+1:]
	k := bytes.Index(rest, []byte(`"ts"`))
	if k < 0 {
		return 0, true // matching event without ts: count, latency 0
	}
	j := k + 4
	for j < len(rest) && (rest[j] == ' ' || rest[j] == ':') {
		j++
	}
	var ts int64
	start := j
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		ts = ts*10 + int64(rest[j]-'0')
		j++
	}
	if j == start {
		return 0, true
	}
	return ts, true
}

func (c *client) join(ackID int) error {
	room := cfg.roomPrefix + strconv.Itoa(c.room)
	if c.roomID != "" {
		room = c.roomID
	}
	payload, _ := json.Marshal([]interface{}{cfg.joinEvent, map[string]string{"roomId": room}})
	var pkt string
	if cfg.joinAck {
		pkt = "42" + nsPrefix() + strconv.Itoa(ackID) + string(payload)
	} else {
		pkt = "42" + nsPrefix() + string(payload)
	}
	return c.write([]byte(pkt))
}

// ---------------------------------------------------------------- -setup roomcast
//
// Roomcast needs real users, rooms and JWTs: before
// connecting, sioload registers users over REST (POST /api/auth/register),
// lets the first member of every room create it (POST /api/rooms), connects
// each socket with its user's token (40{"token":...}) and joins it with
// room:join {roomId} (ack {"data":...} or {"error":...}).
//
// chat: publisher j sends message:send {roomId, text:"ts=<unix ns>;p=<j>;seq=<n>;<pad>"};
// every member (sender included) should get message:new {message:{text,...}}.
// drag: publisher j creates one element (element:create, ack data.element.id),
// then sends element:update {roomId, elementId, updates:{positionX: n+1, positionY}};
// the send time of (element, n) stays in memory; element:updated is matched by
// elementId and positionX. lat_ms covers the other member(s) only, the sender's
// own echo goes to self_lat_ms. Every publish keeps a per-recipient counter, so
// lost and duplicate deliveries are exact.

type rcUser struct{ id, token, name string }

type pubState struct {
	j        int
	c        *client
	room     string
	mem      int64    // expected deliveries of one publish
	selfExp  int64    // of which to the publishing socket itself (0 or 1)
	elemID   string   // drag: the publisher's element
	sent     []int64  // send time (unix ns) of seq n; 0 = not sent
	recv     []uint32 // deliveries of seq n seen by the other members
	recvSelf []uint32 // deliveries of seq n seen by the publishing socket
}

type rcRun struct {
	pubs  []*pubState
	elems map[string]*pubState // drag: element id -> publisher
}

var (
	rcMode         bool
	rcUsers        []rcUser
	rcRoomIDs      []string
	rcState        atomic.Pointer[rcRun]
	selfHist       histogram // drag: latency of the sender's own echo
	rcDup          atomic.Int64
	rcUnmatched    atomic.Int64
	rcServerErrors atomic.Int64
	rcRecvSelf     atomic.Int64
	rcRecvOther    atomic.Int64
	rcStray        atomic.Int64 // room events reaching a socket whose join failed or timed out
	rcErrExample   atomic.Pointer[string]
	joinErrors     atomic.Int64
	httpc          *http.Client
)

func clientToken(i int) string {
	if !rcMode || len(rcUsers) == 0 {
		return ""
	}
	return rcUsers[i%len(rcUsers)].token
}

// apiFromWS turns ws://host:port/socket.io/?... into http://host:port.
func apiFromWS(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	scheme := "http"
	if pu.Scheme == "wss" {
		scheme = "https"
	}
	return scheme + "://" + pu.Host
}

type httpErr struct {
	status int
	msg    string
}

func (e *httpErr) Error() string { return e.msg }

// apiPost POSTs body as JSON and decodes the "data" member of the answer into
// out. 429, 503 and transport errors are retried with backoff.
func apiPost(ctx context.Context, base, path, token string, body, out interface{}) error {
	b, _ := json.Marshal(body)
	var lastErr error
	var retryAfter time.Duration
	for attempt := 0; attempt < 6; attempt++ {
		if attempt > 0 {
			wait := time.Duration(100<<uint(attempt)) * time.Millisecond
			if retryAfter > wait {
				wait = retryAfter
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		req, err := http.NewRequestWithContext(ctx, "POST", base+path, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			lastErr = fmt.Errorf("POST %s%s: %v", base, path, err)
			continue
		}
		rb, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode == 429 || resp.StatusCode == 503 {
			lastErr = &httpErr{resp.StatusCode, fmt.Sprintf("POST %s%s: HTTP %d %s", base, path, resp.StatusCode, trunc(rb))}
			retryAfter = 0 // honour Retry-After (seconds), at most 5 s
			if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && ra > 0 {
				if ra > 5 {
					ra = 5
				}
				retryAfter = time.Duration(ra) * time.Second
			}
			continue
		}
		if resp.StatusCode/100 != 2 {
			return &httpErr{resp.StatusCode, fmt.Sprintf("POST %s%s: HTTP %d %s", base, path, resp.StatusCode, trunc(rb))}
		}
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(rb, &env); err != nil || len(env.Data) == 0 {
			return fmt.Errorf("POST %s%s: answer is not {\"data\": ...}: %s", base, path, trunc(rb))
		}
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("POST %s%s: unexpected data: %v: %s", base, path, err, trunc(rb))
		}
		return nil
	}
	return lastErr
}

// forEach runs fn(0..n-1) with at most conc in flight; the first error stops
// new calls and is returned.
func forEach(ctx context.Context, n, conc int, fn func(k int) error) error {
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	var failed atomic.Bool
	sem := make(chan struct{}, conc)
	for k := 0; k < n && !failed.Load() && ctx.Err() == nil; k++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			defer func() { <-sem }()
			if failed.Load() {
				return
			}
			if err := fn(k); err != nil {
				once.Do(func() { first = err })
				failed.Store(true)
			}
		}(k)
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

func msQuantiles(a []float64) map[string]interface{} {
	sort.Float64s(a)
	q := func(p float64) float64 {
		if len(a) == 0 {
			return 0
		}
		k := int(math.Ceil(p*float64(len(a)))) - 1
		if k < 0 {
			k = 0
		}
		return round(a[k], 2)
	}
	return map[string]interface{}{"p50_ms": q(.5), "p99_ms": q(.99), "max_ms": q(1)}
}

// rcSetup registers cfg.users users and creates cfg.rooms rooms. Room r holds
// connections r, r+R, r+2R, ... (the users of those connections); connection
// r, its first member, creates it.
func rcSetup(ctx context.Context) (map[string]interface{}, error) {
	conc := cfg.apiConc
	httpc = &http.Client{Timeout: cfg.apiTimeout, Transport: &http.Transport{
		MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc, IdleConnTimeout: 30 * time.Second}}
	defer httpc.CloseIdleConnections()
	info := map[string]interface{}{"api": cfg.apiURLs, "users": cfg.users, "user_prefix": cfg.userPrefix, "rooms": cfg.rooms}
	if !cfg.quiet && cfg.loadUsers == "" {
		fmt.Fprintf(os.Stderr, "sioload: roomcast setup: registering %d users (%s<k>) via %d API URL(s), %d requests in flight\n",
			cfg.users, cfg.userPrefix, len(cfg.apiURLs), conc)
	} else if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload: roomcast setup: %d users from %s\n", cfg.users, cfg.loadUsers)
	}
	var done atomic.Int64
	progress := func(what string, total int, t0 time.Time) chan struct{} {
		stop := make(chan struct{})
		if cfg.report > 0 && !cfg.quiet {
			go func() {
				t := time.NewTicker(2 * cfg.report)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case <-t.C:
						fmt.Fprintf(os.Stderr, "  %s: %d/%d (%.1fs)\n", what, done.Load(), total, time.Since(t0).Seconds())
					}
				}
			}()
		}
		return stop
	}

	t0 := time.Now()
	if cfg.loadUsers != "" {
		info["users_from"] = cfg.loadUsers
		delete(info, "user_prefix")
		return info, rcCreateRooms(ctx, info, conc, progress, &done)
	}
	rcUsers = make([]rcUser, cfg.users)
	lat := make([]float64, cfg.users)
	stop := progress("register", cfg.users, t0)
	err := forEach(ctx, cfg.users, conc, func(k int) error {
		base := cfg.apiURLs[k%len(cfg.apiURLs)]
		name := cfg.userPrefix + strconv.Itoa(k)
		t := time.Now()
		var out struct {
			Token string `json:"token"`
			User  struct {
				ID string `json:"id"`
			} `json:"user"`
		}
		err := apiPost(ctx, base, "/api/auth/register", "", map[string]string{
			"username": name, "firstName": "Bench", "email": name + "@example.com", "password": cfg.password}, &out)
		var he *httpErr
		if errors.As(err, &he) && he.status == 409 { // a retried request had got through
			err = apiPost(ctx, base, "/api/auth/login", "", map[string]string{"username": name, "password": cfg.password}, &out)
		}
		if err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
		if out.Token == "" || out.User.ID == "" {
			return fmt.Errorf("register %s: answer has no data.token or data.user.id", name)
		}
		rcUsers[k] = rcUser{id: out.User.ID, token: out.Token, name: name}
		lat[k] = float64(time.Since(t)) / 1e6
		done.Add(1)
		return nil
	})
	close(stop)
	el := time.Since(t0)
	reg := msQuantiles(lat[:done.Load()])
	reg["s"] = round(el.Seconds(), 2)
	reg["per_s"] = round(float64(done.Load())/el.Seconds(), 1)
	info["register"] = reg
	if err != nil {
		return info, err
	}
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload: registered %d users in %.1fs (%.0f/s, p50 %.0f ms, p99 %.0f ms)\n",
			cfg.users, el.Seconds(), float64(cfg.users)/el.Seconds(), reg["p50_ms"], reg["p99_ms"])
	}
	if cfg.saveUsers != "" {
		if err := saveUsers(cfg.saveUsers); err != nil {
			return info, fmt.Errorf("-save-users: %v", err)
		}
	}
	return info, rcCreateRooms(ctx, info, conc, progress, &done)
}

type savedUser struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Token    string `json:"token"`
}

func saveUsers(path string) error {
	out := make([]savedUser, len(rcUsers))
	for k, u := range rcUsers {
		out[k] = savedUser{u.id, u.name, u.token}
	}
	b, _ := json.Marshal(out)
	return os.WriteFile(path, b, 0o600)
}

func loadUsers(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var in []savedUser
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if len(in) == 0 {
		return fmt.Errorf("%s holds no users", path)
	}
	rcUsers = make([]rcUser, len(in))
	for k, u := range in {
		if u.ID == "" || u.Token == "" {
			return fmt.Errorf("%s: user %d lacks id or token", path, k)
		}
		rcUsers[k] = rcUser{id: u.ID, token: u.Token, name: u.Username}
	}
	return nil
}

// rcCreateRooms: connection r, the first member of room r, creates it.
func rcCreateRooms(ctx context.Context, info map[string]interface{}, conc int,
	progress func(string, int, time.Time) chan struct{}, done *atomic.Int64) error {
	if cfg.rooms <= 0 {
		return nil
	}
	t1 := time.Now()
	done.Store(0)
	rcRoomIDs = make([]string, cfg.rooms)
	lat := make([]float64, cfg.rooms)
	stop := progress("rooms", cfg.rooms, t1)
	err := forEach(ctx, cfg.rooms, conc, func(r int) error {
		creator := rcUsers[r%cfg.users]
		seen := map[string]bool{creator.id: true}
		others := []string{}
		for i := r; i < cfg.conns; i += cfg.rooms {
			if u := rcUsers[i%cfg.users]; !seen[u.id] {
				seen[u.id] = true
				others = append(others, u.id)
			}
		}
		mode := cfg.roomBody
		if mode == "auto" {
			mode = "participants"
			if len(others) == 1 {
				mode = "other"
			}
		}
		var body map[string]interface{}
		switch mode {
		case "other":
			if len(others) != 1 {
				return fmt.Errorf("room %d has %d other users; -room-body other needs exactly one", r, len(others))
			}
			body = map[string]interface{}{"otherUserId": others[0]}
		case "participants":
			ids := others
			if cfg.roomWithSelf {
				ids = append([]string{creator.id}, others...)
			}
			body = map[string]interface{}{"participantIds": ids}
		default:
			return fmt.Errorf("bad -room-body %q", cfg.roomBody)
		}
		t := time.Now()
		var out struct {
			ID string `json:"id"`
		}
		if err := apiPost(ctx, cfg.apiURLs[r%len(cfg.apiURLs)], "/api/rooms", creator.token, body, &out); err != nil {
			return fmt.Errorf("create room %d (%d other users): %w", r, len(others), err)
		}
		if out.ID == "" {
			return fmt.Errorf("create room %d: answer has no data.id", r)
		}
		rcRoomIDs[r] = out.ID
		lat[r] = float64(time.Since(t)) / 1e6
		done.Add(1)
		return nil
	})
	close(stop)
	el := time.Since(t1)
	rm := msQuantiles(lat[:done.Load()])
	rm["s"] = round(el.Seconds(), 2)
	info["create_rooms"] = rm
	if err != nil {
		return err
	}
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload: created %d rooms in %.1fs\n", cfg.rooms, el.Seconds())
	}
	return nil
}

// rcCreateElements: drag setup, one element per publisher, ack id 2.
func rcCreateElements(ctx context.Context, st *rcRun) error {
	t0 := time.Now()
	err := forEach(ctx, len(st.pubs), 64, func(j int) error {
		ps := st.pubs[j]
		payload, _ := json.Marshal([]interface{}{"element:create", map[string]interface{}{
			"roomId": ps.room, "element": map[string]interface{}{"type": "note", "positionX": 0, "positionY": cfg.dragY,
				"width": 120, "height": 80, "content": "sioload " + strconv.Itoa(j)}}})
		if err := ps.c.write([]byte("42" + nsPrefix() + "2" + string(payload))); err != nil {
			return fmt.Errorf("element:create (publisher %d): %v", j, err)
		}
		deadline := time.After(cfg.createTimeout)
		for {
			select {
			case a := <-ps.c.ackCh:
				if a.id != 2 {
					continue
				}
				if e := ackError(a.body); e != "" {
					return fmt.Errorf("element:create in room %s: %s", ps.room, e)
				}
				var arr []struct {
					Data struct {
						Element struct {
							ID string `json:"id"`
						} `json:"element"`
					} `json:"data"`
				}
				if err := json.Unmarshal(a.body, &arr); err != nil || len(arr) == 0 || arr[0].Data.Element.ID == "" {
					return fmt.Errorf("element:create ack without data.element.id: %s", trunc(a.body))
				}
				ps.elemID = arr[0].Data.Element.ID
				return nil
			case <-deadline:
				return fmt.Errorf("element:create (publisher %d): no ack within %s", j, cfg.createTimeout)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	if err != nil {
		return err
	}
	for _, ps := range st.pubs {
		st.elems[ps.elemID] = ps
	}
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload: created %d elements in %.2fs\n", len(st.pubs), time.Since(t0).Seconds())
	}
	return nil
}

// ackError returns "code: message" for an ack [{"error":{...}}], else "".
func ackError(body []byte) string {
	var arr []json.RawMessage
	if json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
		return ""
	}
	var o struct {
		Error *struct {
			Code    interface{} `json:"code"`
			Message string      `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(arr[0], &o) != nil || o.Error == nil {
		return ""
	}
	return fmt.Sprintf("%v: %s", o.Error.Code, o.Error.Message)
}

func fatalSetup(err error) {
	fmt.Fprintf(os.Stderr, "sioload: roomcast setup failed: %v\n", err)
	emit(map[string]interface{}{"tool": "sioload", "label": cfg.label, "setup": "roomcast", "scenario": cfg.scenario,
		"error": err.Error(), "time": time.Now().UTC().Format(time.RFC3339)})
	os.Exit(1)
}

// frameBuilder returns the function that writes publish n (sent at ts) of
// publisher j.
func frameBuilder(j int, room string, ps *pubState, pad string) func(buf []byte, ts, n int64) []byte {
	pre := "42" + nsPrefix() + `["` + cfg.event + `",{"roomId":` + strconv.Quote(room)
	switch {
	case !rcMode:
		head := []byte(pre + `,"ts":`)
		tail := []byte(`,"pad":"` + pad + `"}]`)
		return func(buf []byte, ts, n int64) []byte {
			buf = append(buf, head...)
			buf = strconv.AppendInt(buf, ts, 10)
			buf = append(buf, `,"seq":`...)
			buf = strconv.AppendInt(buf, n, 10)
			return append(buf, tail...)
		}
	case cfg.scenario == "chat":
		head := []byte(pre + `,"text":"ts=`)
		mid := []byte(";p=" + strconv.Itoa(j) + ";seq=")
		tail := []byte(";" + pad + `"}]`)
		return func(buf []byte, ts, n int64) []byte {
			buf = append(buf, head...)
			buf = strconv.AppendInt(buf, ts, 10)
			buf = append(buf, mid...)
			buf = strconv.AppendInt(buf, n, 10)
			return append(buf, tail...)
		}
	default: // drag: positionX = n+1 (the element was created at 0)
		head := []byte(pre + `,"elementId":` + strconv.Quote(ps.elemID) + `,"updates":{"positionX":`)
		tail := []byte(`,"positionY":` + strconv.FormatFloat(cfg.dragY, 'f', -1, 64) + `}}]`)
		return func(buf []byte, ts, n int64) []byte {
			buf = append(buf, head...)
			buf = strconv.AppendInt(buf, n+1, 10)
			return append(buf, tail...)
		}
	}
}

// rcEvent handles one EVENT packet body `["name",{...}]` in roomcast mode.
func rcEvent(c *client, body []byte, now int64) {
	name, rest, ok := eventName(body)
	if !ok {
		recvOther.Add(1)
		return
	}
	switch {
	case string(name) == cfg.recvEvent:
		st := rcState.Load()
		if st == nil {
			recvOther.Add(1)
			return
		}
		if !c.member.Load() { // not counted as a member: kept out of the per-publish counts
			rcStray.Add(1)
			return
		}
		if cfg.scenario == "chat" {
			rcChat(c, st, rest, now)
		} else {
			rcDrag(c, st, rest, now)
		}
	case string(name) == "error":
		rcServerErrors.Add(1)
		if rcErrExample.Load() == nil {
			s := trunc(body)
			rcErrExample.CompareAndSwap(nil, &s)
		}
	default:
		recvOther.Add(1)
	}
}

// count records one delivery of seq of ps (self: to the publishing socket);
// false for a duplicate.
func (ps *pubState) count(seq int, self bool) bool {
	if self {
		if int64(atomic.AddUint32(&ps.recvSelf[seq], 1)) > ps.selfExp {
			rcDup.Add(1)
			return false
		}
		rcRecvSelf.Add(1)
	} else {
		if int64(atomic.AddUint32(&ps.recv[seq], 1)) > ps.mem-ps.selfExp {
			rcDup.Add(1)
			return false
		}
		rcRecvOther.Add(1)
	}
	recvCount.Add(1)
	return true
}

// rcLost returns the deliveries still missing: to the publishing sockets
// themselves and to the other members.
func rcLost(st *rcRun) (self, other int64) {
	for _, ps := range st.pubs {
		for n := range ps.sent {
			if atomic.LoadInt64(&ps.sent[n]) == 0 {
				continue
			}
			if d := ps.selfExp - int64(atomic.LoadUint32(&ps.recvSelf[n])); d > 0 {
				self += d
			}
			if d := ps.mem - ps.selfExp - int64(atomic.LoadUint32(&ps.recv[n])); d > 0 {
				other += d
			}
		}
	}
	return
}

func rcChat(c *client, st *rcRun, rest []byte, now int64) {
	v := valueAfterKey(rest, []byte(`"text"`))
	if len(v) == 0 || v[0] != '"' {
		rcUnmatched.Add(1)
		return
	}
	ts, v, ok1 := taggedInt(v[1:], "ts=")
	pj, v, ok2 := taggedInt(v, ";p=")
	seq, _, ok3 := taggedInt(v, ";seq=")
	if !ok1 || !ok2 || !ok3 || pj >= int64(len(st.pubs)) {
		rcUnmatched.Add(1)
		return
	}
	ps := st.pubs[pj]
	if seq >= int64(len(ps.sent)) || atomic.LoadInt64(&ps.sent[seq]) == 0 {
		rcUnmatched.Add(1)
		return
	}
	if ps.count(int(seq), c == ps.c) {
		latHist.record(now - ts)
	}
}

func rcDrag(c *client, st *rcRun, rest []byte, now int64) {
	eid := valueAfterKey(rest, []byte(`"elementId"`))
	if len(eid) < 2 || eid[0] != '"' {
		rcUnmatched.Add(1)
		return
	}
	eid = eid[1:]
	if k := bytes.IndexByte(eid, '"'); k >= 0 {
		eid = eid[:k]
	}
	upd := rest
	if k := bytes.Index(rest, []byte(`"updates"`)); k >= 0 {
		upd = rest[k:]
	}
	px, ok := parseIntNumber(valueAfterKey(upd, []byte(`"positionX"`)))
	ps := st.elems[string(eid)]
	if !ok || ps == nil || px < 1 || px > int64(len(ps.sent)) {
		rcUnmatched.Add(1)
		return
	}
	seq := int(px - 1)
	sent := atomic.LoadInt64(&ps.sent[seq])
	if sent == 0 {
		rcUnmatched.Add(1)
		return
	}
	if self := c == ps.c; !ps.count(seq, self) {
		return
	} else if self {
		selfHist.record(now - sent)
	} else {
		latHist.record(now - sent)
	}
}

// eventName splits `["name",...` into name and the bytes after its closing quote.
func eventName(body []byte) ([]byte, []byte, bool) {
	i := 0
	for i < len(body) && body[i] == ' ' {
		i++
	}
	if i >= len(body) || body[i] != '[' {
		return nil, nil, false
	}
	i++
	for i < len(body) && body[i] == ' ' {
		i++
	}
	if i >= len(body) || body[i] != '"' {
		return nil, nil, false
	}
	i++
	k := bytes.IndexByte(body[i:], '"')
	if k < 0 {
		return nil, nil, false
	}
	return body[i : i+k], body[i+k+1:], true
}

// valueAfterKey returns b from the value of the first `key:` on (nil if none).
func valueAfterKey(b, key []byte) []byte {
	k := bytes.Index(b, key)
	if k < 0 {
		return nil
	}
	j := k + len(key)
	for j < len(b) && b[j] == ' ' {
		j++
	}
	if j >= len(b) || b[j] != ':' {
		return nil
	}
	j++
	for j < len(b) && b[j] == ' ' {
		j++
	}
	return b[j:]
}

// taggedInt reads `<tag><digits>` at the start of b.
func taggedInt(b []byte, tag string) (int64, []byte, bool) {
	if !bytes.HasPrefix(b, []byte(tag)) {
		return 0, b, false
	}
	b = b[len(tag):]
	var v int64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		v = v*10 + int64(b[n]-'0')
		n++
	}
	return v, b[n:], n > 0
}

// parseIntNumber reads a JSON number that must be integral (5, 5.0, 5e0).
func parseIntNumber(b []byte) (int64, bool) {
	n := 0
	for n < len(b) && (b[n] == '-' || b[n] == '+' || b[n] == '.' || b[n] == 'e' || b[n] == 'E' || (b[n] >= '0' && b[n] <= '9')) {
		n++
	}
	if n == 0 {
		return 0, false
	}
	var v int64
	k := 0
	for k < n && b[k] >= '0' && b[k] <= '9' {
		v = v*10 + int64(b[k]-'0')
		k++
	}
	if k == n {
		return v, k > 0
	}
	f, err := strconv.ParseFloat(string(b[:n]), 64)
	if err != nil || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}

// ---------------------------------------------------------------- /proc helpers

type procSample struct {
	Pid      int     `json:"pid"`
	RssKB    int64   `json:"rss_kb"`
	CPUTicks int64   `json:"-"`
	CPUSec   float64 `json:"cpu_s"`
	// The same CPU to the nanosecond: the run time of each of the process's threads from
	// /proc/PID/task/*/schedstat, summed (0 where the kernel has no schedstat). Ticks are 10 ms,
	// too coarse for a small difference between two short runs.
	SchedSec float64 `json:"-"`
}

var clkTck = int64(100)

func readProc(pid int) procSample {
	s := procSample{Pid: pid, RssKB: -1}
	if f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "VmRSS:") {
				fs := strings.Fields(l)
				if len(fs) >= 2 {
					s.RssKB, _ = strconv.ParseInt(fs[1], 10, 64)
				}
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		str := string(b)
		if k := strings.LastIndexByte(str, ')'); k > 0 {
			fs := strings.Fields(str[k+1:])
			// fields after ')' start at field 3 (state); utime=14, stime=15
			if len(fs) > 13 {
				u, _ := strconv.ParseInt(fs[11], 10, 64)
				st, _ := strconv.ParseInt(fs[12], 10, 64)
				s.CPUTicks = u + st
				s.CPUSec = float64(s.CPUTicks) / float64(clkTck)
			}
		}
	}
	if tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid)); err == nil {
		var ns int64
		for _, t := range tasks {
			if b, err := os.ReadFile(t); err == nil {
				if fs := strings.Fields(string(b)); len(fs) > 0 {
					v, _ := strconv.ParseInt(fs[0], 10, 64)
					ns += v
				}
			}
		}
		s.SchedSec = float64(ns) / 1e9
	}
	return s
}

func readAll() []procSample { return readPids(cfg.serverPids) }

func readRedis() []procSample { return readPids(cfg.redisPids) }

func readPids(pids []int) []procSample {
	out := make([]procSample, 0, len(pids))
	for _, p := range pids {
		out = append(out, readProc(p))
	}
	return out
}

func sumCPU(a, b []procSample) float64 {
	var s float64
	for k := range b {
		s += b[k].CPUSec - a[k].CPUSec
	}
	return s
}

// machineCPU returns (busy, total) jiffies summed over all CPUs from /proc/stat.
func machineCPU() (int64, int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line := strings.SplitN(string(b), "\n", 2)[0]
	fs := strings.Fields(line)
	var busy, total int64
	for i, f := range fs[1:] {
		v, _ := strconv.ParseInt(f, 10, 64)
		if i >= 8 { // guest, guest_nice are already in user/nice
			break
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}

func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// ---------------------------------------------------------------- setup helpers

func raiseNofile(need int) uint64 {
	var rl syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	want := uint64(need + 1024)
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && want > n {
			want = n
		}
	}
	if want > rl.Cur {
		nr := syscall.Rlimit{Cur: want, Max: rl.Max}
		if want > rl.Max {
			nr.Max = want
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nr); err != nil {
			// fall back to the hard limit
			nr = syscall.Rlimit{Cur: rl.Max, Max: rl.Max}
			syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nr)
		}
	}
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	return rl.Cur
}

func normalizeURL(u string) (string, error) {
	u = strings.TrimSpace(u)
	if !strings.Contains(u, "://") {
		u = "ws://" + u
	}
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	switch pu.Scheme {
	case "http":
		pu.Scheme = "ws"
	case "https":
		pu.Scheme = "wss"
	}
	if pu.Path == "" || pu.Path == "/" {
		pu.Path = "/socket.io/"
	}
	if pu.RawQuery == "" {
		pu.RawQuery = "EIO=4&transport=websocket"
	}
	return pu.String(), nil
}

func isLoopbackURL(u string) bool {
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := pu.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func setupSrcIPs() {
	if cfg.srcIPs == "" || cfg.srcIPs == "none" {
		return
	}
	perURL := (cfg.conns + len(cfg.urls) - 1) / len(cfg.urls)
	if cfg.srcIPs == "auto" {
		if perURL <= cfg.perIP {
			return
		}
		for _, u := range cfg.urls {
			if !isLoopbackURL(u) {
				fmt.Fprintf(os.Stderr, "sioload: -src-ips auto only works for loopback targets; %s is not\n", u)
				os.Exit(2)
			}
		}
		n := (perURL + cfg.perIP - 1) / cfg.perIP
		for k := 0; k < n; k++ {
			srcAddrs = append(srcAddrs, &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+k))})
		}
		return
	}
	for _, s := range strings.Split(cfg.srcIPs, ",") {
		ip := net.ParseIP(strings.TrimSpace(s))
		if ip == nil {
			fmt.Fprintf(os.Stderr, "sioload: bad source IP %q\n", s)
			os.Exit(2)
		}
		srcAddrs = append(srcAddrs, &net.TCPAddr{IP: ip})
	}
}

// ---------------------------------------------------------------- main

func main() {
	var urls, pids string
	flag.StringVar(&urls, "urls", "ws://127.0.0.1:7101", "comma-separated gateway URLs (ws://host:port[/socket.io/?EIO=4&transport=websocket]); connections go round-robin")
	flag.IntVar(&cfg.conns, "conns", 100, "number of client connections")
	flag.IntVar(&cfg.rooms, "rooms", 10, "number of rooms (connection i joins room i%rooms); 0 = no joins")
	flag.StringVar(&cfg.roomPrefix, "room-prefix", "r", "room name prefix (room k is <prefix><k>)")
	flag.IntVar(&cfg.publishers, "publishers", 10, "number of publishing connections (spread over rooms and URLs)")
	flag.Float64Var(&cfg.rate, "rate", 10, "publishes per second per publisher")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "publish duration (or hold time with -idle)")
	flag.StringVar(&cfg.event, "event", "bench:publish", "event name used to publish")
	flag.StringVar(&cfg.recvEvent, "recv-event", "bench:message", "event name counted on receipt")
	flag.StringVar(&cfg.joinEvent, "join-event", "room:join", "event name used to join a room")
	flag.BoolVar(&cfg.joinAck, "join-ack", true, "request a Socket.IO ack for room:join and wait for it (set false for gateways that do not ack)")
	flag.DurationVar(&cfg.joinTimeout, "join-timeout", 10*time.Second, "how long to wait for join acks")
	flag.IntVar(&cfg.size, "size", 64, "length in bytes of the \"pad\" string in each payload")
	flag.BoolVar(&cfg.includeSender, "include-sender", true, "the sender receives its own publish (expected deliveries = members, else members-1)")
	flag.StringVar(&cfg.token, "token", "user-%d", "auth token template (%d = connection index)")
	flag.StringVar(&cfg.authKey, "auth-key", "token", "key of the token in the auth object")
	flag.StringVar(&cfg.authJSON, "auth", "", "raw auth JSON template overriding -token (%d = connection index)")
	flag.BoolVar(&cfg.noAuth, "no-auth", false, "send a bare \"40\" without auth payload")
	flag.StringVar(&cfg.namespace, "namespace", "/", "Socket.IO namespace")
	flag.BoolVar(&cfg.idle, "idle", false, "connections-only mode: hold -conns idle connections for -duration and report survivors and server RSS")
	flag.BoolVar(&cfg.idleJoin, "idle-join", false, "in -idle mode also join rooms")
	flag.StringVar(&pids, "server-pid", "", "comma-separated server PIDs whose VmRSS and CPU time are reported")
	flag.StringVar(&cfg.srcIPs, "src-ips", "auto", "local source addresses: auto (127.0.0.2.. when conns per URL exceed -per-ip), none, or a comma list")
	flag.IntVar(&cfg.perIP, "per-ip", 25000, "connections per source address per URL before moving to the next (with -src-ips)")
	flag.IntVar(&cfg.connConc, "connect-concurrency", 100, "concurrent handshakes in flight")
	flag.Float64Var(&cfg.connRate, "connect-rate", 0, "max new connections per second (0 = unlimited)")
	flag.DurationVar(&cfg.connTimeout, "connect-timeout", 15*time.Second, "per-connection handshake timeout")
	flag.DurationVar(&cfg.settle, "settle", 500*time.Millisecond, "pause after joins before publishing")
	flag.DurationVar(&cfg.drain, "drain", 5*time.Second, "max wait after publishing for in-flight deliveries")
	flag.DurationVar(&cfg.report, "report", time.Second, "progress report interval on stderr (0 = off)")
	flag.IntVar(&cfg.rbuf, "read-buffer", 4096, "WebSocket read buffer size")
	flag.IntVar(&cfg.wbuf, "write-buffer", 4096, "WebSocket write buffer size")
	flag.StringVar(&cfg.outFile, "out", "", "also append the JSON result line to this file")
	flag.StringVar(&cfg.label, "label", "", "free-form label copied into the JSON result")
	flag.BoolVar(&cfg.tsScheduled, "ts-scheduled", false, "stamp ts with the scheduled send time instead of the actual one (corrects coordinated omission when publishers fall behind)")
	flag.BoolVar(&cfg.quiet, "quiet", false, "no human summary")
	flag.BoolVar(&cfg.stopOnConnFail, "abort-on-connect-errors", false, "exit 1 before publishing if any connection failed")
	var redisPids, apis string
	flag.StringVar(&redisPids, "redis-pid", "", "comma-separated Redis PIDs: CPU and RSS reported separately (redis_cpu_us_per_publish); a PID also listed in -server-pid counts as Redis only")
	flag.StringVar(&cfg.setup, "setup", "peer", "peer: bench:publish relay, tokens from -token; roomcast: register users over REST, create rooms, connect with their JWTs (see -scenario)")
	flag.StringVar(&apis, "api", "", "roomcast: comma-separated REST base URLs (http://host:port); default: derived from -urls")
	flag.StringVar(&cfg.scenario, "scenario", "chat", "roomcast: chat (message:send -> message:new, every member) or drag (element:create once, then element:update at -rate -> element:updated)")
	flag.IntVar(&cfg.members, "members", 0, "roomcast: members per room (sets -rooms to ceil(conns/members)); 0 = conns/rooms")
	flag.IntVar(&cfg.users, "users", 0, "roomcast: distinct users to register (connection i uses user i%users; 0 = one per connection)")
	flag.StringVar(&cfg.userPrefix, "user-prefix", "", "roomcast: username prefix (default: sl<random>u, unique per run)")
	flag.StringVar(&cfg.password, "password", "Sioload-bench-1", "roomcast: password of the registered users")
	flag.IntVar(&cfg.apiConc, "api-concurrency", 8, "roomcast: concurrent REST requests during setup")
	flag.DurationVar(&cfg.apiTimeout, "api-timeout", 60*time.Second, "roomcast: timeout of one REST request")
	flag.StringVar(&cfg.roomBody, "room-body", "auto", "roomcast: POST /api/rooms body: auto ({otherUserId} for 2-user rooms, else {participantIds}), participants, other")
	flag.BoolVar(&cfg.roomWithSelf, "participants-include-self", false, "roomcast: list the creator in participantIds too")
	flag.Float64Var(&cfg.dragY, "drag-y", 100, "roomcast drag: positionY sent with every update")
	flag.DurationVar(&cfg.createTimeout, "create-timeout", 15*time.Second, "roomcast drag: wait for each element:create ack")
	flag.StringVar(&cfg.saveUsers, "save-users", "", "roomcast: write the registered users (JSON: id, username, token) to this file")
	flag.StringVar(&cfg.loadUsers, "load-users", "", "roomcast: take the users (and their tokens) from a -save-users file instead of registering (-users defaults to all of them)")
	flag.StringVar(&cfg.jwtSecret, "jwt-secret", "", "peer mode: authenticate with an HS256 JWT signed with this secret, its sub the -token template (the peers' --jwt-secret)")
	var stormURLs string
	flag.BoolVar(&cfg.storm, "storm", false, "reconnect storm: every socket on -urls, that node SIGKILLed (-storm-kill-pid), every socket back on -storm-urls and in its room (roomcast: with since)")
	flag.StringVar(&stormURLs, "storm-urls", "", "storm: the surviving node(s): publishers connect there and every socket reconnects there")
	flag.IntVar(&cfg.stormKillPid, "storm-kill-pid", 0, "storm: the PID of the node behind -urls, killed with SIGKILL")
	flag.IntVar(&cfg.stormRooms, "storm-rooms", 100, "storm: rooms that keep traffic through the storm (one publisher each, on the survivor, at -rate/s)")
	flag.DurationVar(&cfg.stormBefore, "storm-before", 3*time.Second, "storm: traffic before the kill")
	flag.DurationVar(&cfg.stormAfter, "storm-after", 3*time.Second, "storm: traffic after the last rejoin, the baseline taken off the storm's CPU")
	flag.DurationVar(&cfg.stormTimeout, "storm-timeout", 120*time.Second, "storm: the longest wait, from the kill, for every socket to be back in its room")
	flag.DurationVar(&cfg.stormDelay, "storm-delay", time.Second, "storm: first reconnection delay, doubled per failed attempt (socket.io-client's reconnectionDelay)")
	flag.DurationVar(&cfg.stormDelayMax, "storm-delay-max", 5*time.Second, "storm: largest reconnection delay (socket.io-client's reconnectionDelayMax)")
	flag.Float64Var(&cfg.stormJitter, "storm-jitter", 0.5, "storm: each delay is moved by up to this fraction of it, either way (socket.io-client's randomizationFactor)")
	flag.BoolVar(&cfg.stormNoRecovery, "storm-no-recovery", false, "storm, roomcast: rejoin without since (a snapshot instead of the missed events)")
	flag.Parse()
	explicit := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { explicit[f.Name] = true })

	for _, u := range strings.Split(urls, ",") {
		if strings.TrimSpace(u) == "" {
			continue
		}
		nu, err := normalizeURL(u)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sioload: bad url %q: %v\n", u, err)
			os.Exit(2)
		}
		cfg.urls = append(cfg.urls, nu)
	}
	if len(cfg.urls) == 0 || cfg.conns <= 0 {
		fmt.Fprintln(os.Stderr, "sioload: need -urls and -conns > 0")
		os.Exit(2)
	}
	for _, p := range strings.Split(pids, ",") {
		if p = strings.TrimSpace(p); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil {
				fmt.Fprintf(os.Stderr, "sioload: bad pid %q\n", p)
				os.Exit(2)
			}
			cfg.serverPids = append(cfg.serverPids, n)
		}
	}
	for _, p := range strings.Split(redisPids, ",") {
		if p = strings.TrimSpace(p); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil {
				fmt.Fprintf(os.Stderr, "sioload: bad redis pid %q\n", p)
				os.Exit(2)
			}
			cfg.redisPids = append(cfg.redisPids, n)
		}
	}
	if len(cfg.redisPids) > 0 { // a Redis PID listed in -server-pid too is Redis only
		keep := cfg.serverPids[:0]
		for _, p := range cfg.serverPids {
			isRedis := false
			for _, r := range cfg.redisPids {
				isRedis = isRedis || r == p
			}
			if !isRedis {
				keep = append(keep, p)
			}
		}
		cfg.serverPids = keep
	}
	switch cfg.setup {
	case "peer":
	case "roomcast":
		rcMode = true
		if cfg.scenario != "chat" && cfg.scenario != "drag" {
			fmt.Fprintf(os.Stderr, "sioload: -scenario must be chat or drag\n")
			os.Exit(2)
		}
		if !explicit["event"] {
			cfg.event = map[string]string{"chat": "message:send", "drag": "element:update"}[cfg.scenario]
		}
		if !explicit["recv-event"] {
			cfg.recvEvent = map[string]string{"chat": "message:new", "drag": "element:updated"}[cfg.scenario]
		}
		if cfg.members > 0 && !(cfg.idle && !cfg.idleJoin) {
			cfg.rooms = (cfg.conns + cfg.members - 1) / cfg.members
		}
		if cfg.loadUsers != "" {
			if err := loadUsers(cfg.loadUsers); err != nil {
				fmt.Fprintf(os.Stderr, "sioload: -load-users: %v\n", err)
				os.Exit(2)
			}
			if cfg.users <= 0 || cfg.users > len(rcUsers) {
				cfg.users = len(rcUsers)
			}
			rcUsers = rcUsers[:cfg.users]
		}
		if cfg.users <= 0 || cfg.users > cfg.conns {
			cfg.users = cfg.conns
		}
		if cfg.userPrefix == "" {
			var rb [3]byte
			if f, err := os.Open("/dev/urandom"); err == nil {
				io.ReadFull(f, rb[:])
				f.Close()
			}
			cfg.userPrefix = "sl" + strconv.FormatInt(time.Now().Unix()%1000000, 36) + fmt.Sprintf("%02x%02x%02x", rb[0], rb[1], rb[2]) + "u"
		}
		for _, a := range strings.Split(apis, ",") {
			if a = strings.TrimSpace(a); a != "" {
				cfg.apiURLs = append(cfg.apiURLs, strings.TrimRight(a, "/"))
			}
		}
		if len(cfg.apiURLs) == 0 {
			for _, u := range cfg.urls {
				cfg.apiURLs = append(cfg.apiURLs, apiFromWS(u))
			}
		}
		if cfg.apiConc < 1 {
			cfg.apiConc = 1
		}
	default:
		fmt.Fprintf(os.Stderr, "sioload: -setup must be peer or roomcast\n")
		os.Exit(2)
	}
	if cfg.storm {
		for _, u := range strings.Split(stormURLs, ",") {
			if strings.TrimSpace(u) == "" {
				continue
			}
			nu, err := normalizeURL(u)
			if err != nil {
				fmt.Fprintf(os.Stderr, "sioload: bad -storm-urls %q: %v\n", u, err)
				os.Exit(2)
			}
			cfg.stormURLs = append(cfg.stormURLs, nu)
		}
		if len(cfg.stormURLs) == 0 || cfg.stormKillPid <= 0 || cfg.idle || cfg.rooms <= 0 {
			fmt.Fprintln(os.Stderr, "sioload: -storm needs -storm-urls, -storm-kill-pid and rooms, and no -idle")
			os.Exit(2)
		}
		if rcMode {
			cfg.scenario = "chat"
			cfg.event, cfg.recvEvent = "message:send", "message:new"
		}
	}
	if cfg.idle && !cfg.idleJoin {
		cfg.rooms = 0
	}
	if cfg.rooms > cfg.conns {
		cfg.rooms = cfg.conns
	}
	if cfg.publishers > cfg.conns {
		cfg.publishers = cfg.conns
	}
	nofile := raiseNofile(cfg.conns)
	setupSrcIPs()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigCh := make(chan os.Signal, 1)
	signal.Notify(sigCh, os.Interrupt, syscall.SIGTERM)
	interrupted := atomic.Bool{}
	go func() {
		<-sigCh
		interrupted.Store(true)
		cancel()
	}()

	var setupInfo map[string]interface{}
	if rcMode {
		if cfg.rooms > cfg.conns {
			cfg.rooms = cfg.conns
		}
		var err error
		setupInfo, err = rcSetup(ctx)
		if err != nil {
			fatalSetup(err)
		}
	}

	if cfg.storm {
		runStorm(ctx, setupInfo, nofile)
		if interrupted.Load() {
			os.Exit(130)
		}
		return
	}

	procBase := readAll()
	redisBase := readRedis()
	cpuBase := selfCPU()

	// ---- build clients: room = i % R; url chosen so that the members of
	// every room alternate between URLs (i / R) % U.
	U := len(cfg.urls)
	clients := make([]*client, cfg.conns)
	for i := range clients {
		room := -1
		uidx := i % U
		if cfg.rooms > 0 {
			room = i % cfg.rooms
			uidx = (i / cfg.rooms) % U
		}
		clients[i] = &client{id: i, url: cfg.urls[uidx], room: room, ackCh: make(chan ackMsg, 1)}
		if rcMode {
			clients[i].token = rcUsers[i%len(rcUsers)].token
			if room >= 0 {
				clients[i].roomID = rcRoomIDs[room]
			}
		}
	}

	// ---- connect (bounded concurrency, optional rate limit)
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload: connecting %d conns to %d url(s), rooms=%d, nofile=%d, src-ips=%d\n",
			cfg.conns, U, cfg.rooms, nofile, len(srcAddrs))
	}
	var readers sync.WaitGroup
	connStart := time.Now()
	sem := make(chan struct{}, cfg.connConc)
	var cwg sync.WaitGroup
	var interval time.Duration
	if cfg.connRate > 0 {
		interval = time.Duration(float64(time.Second) / cfg.connRate)
	}
	connProgressDone := make(chan struct{})
	if cfg.report > 0 && !cfg.quiet {
		go func() {
			t := time.NewTicker(cfg.report)
			defer t.Stop()
			for {
				select {
				case <-connProgressDone:
					return
				case <-t.C:
					fmt.Fprintf(os.Stderr, "  connect: ok=%d fail=%d (%.1fs)\n", connectOK.Load(), connectFail.Load(), time.Since(connStart).Seconds())
				}
			}
		}()
	}
	for i, c := range clients {
		if ctx.Err() != nil {
			break
		}
		if interval > 0 {
			target := connStart.Add(time.Duration(i) * interval)
			if d := time.Until(target); d > 0 {
				time.Sleep(d)
			}
		}
		sem <- struct{}{}
		cwg.Add(1)
		go func(c *client) {
			defer cwg.Done()
			defer func() { <-sem }()
			if err := c.connect(ctx); err != nil {
				connectFail.Add(1)
				k := classifyErr(err)
				addErrKind(errKinds, k)
				errKindsMu.Lock()
				if _, ok := errExamples[k]; !ok {
					errExamples[k] = err.Error()
				}
				errKindsMu.Unlock()
				return
			}
			connectOK.Add(1)
			readers.Add(1)
			go c.readLoop(&readers)
			if c.room >= 0 {
				if err := c.join(1); err != nil {
					addErrKind(errKinds, "join_write_"+classifyErr(err))
					return
				}
				joinSent.Add(1)
				if cfg.joinAck {
					select {
					case a := <-c.ackCh:
						joinAcked.Add(1)
						if rcMode { // {"error": ...} ack: the socket is not in the room
							if e := ackError(a.body); e != "" {
								joinErrors.Add(1)
								addErrKind(errKinds, "join_error")
								errKindsMu.Lock()
								if _, ok := errExamples["join_error"]; !ok {
									errExamples["join_error"] = e
								}
								errKindsMu.Unlock()
								return
							}
						}
					case <-time.After(cfg.joinTimeout):
						addErrKind(errKinds, "join_ack_timeout")
						if rcMode {
							joinErrors.Add(1)
							return
						}
					case <-ctx.Done():
					}
				}
				c.joined = true
				c.member.Store(true)
			}
		}(c)
	}
	cwg.Wait()
	close(connProgressDone)
	connElapsed := time.Since(connStart)

	connTimes := make([]float64, 0, cfg.conns)
	members := make([]int64, cfg.rooms+1)
	for _, c := range clients {
		if c.alive.Load() || c.connTime > 0 {
			connTimes = append(connTimes, float64(c.connTime)/1e6)
		}
		if c.joined && c.room >= 0 {
			members[c.room]++
		}
	}
	sort.Float64s(connTimes)
	pct := func(a []float64, q float64) float64 {
		if len(a) == 0 {
			return 0
		}
		k := int(math.Ceil(q*float64(len(a)))) - 1
		if k < 0 {
			k = 0
		}
		return a[k]
	}
	if !cfg.quiet {
		je := ""
		if rcMode {
			je = fmt.Sprintf("; join errors %d: error acks or timeouts", joinErrors.Load())
		}
		fmt.Fprintf(os.Stderr, "sioload: connected %d/%d in %.2fs (join sent %d, acked %d%s)\n",
			connectOK.Load(), cfg.conns, connElapsed.Seconds(), joinSent.Load(), joinAcked.Load(), je)
	}
	if cfg.stopOnConnFail && connectFail.Load() > 0 {
		fmt.Fprintf(os.Stderr, "sioload: aborting, %d connect errors: %v\n", connectFail.Load(), errKinds)
		os.Exit(1)
	}

	result := map[string]interface{}{
		"tool":   "sioload",
		"label":  cfg.label,
		"urls":   cfg.urls,
		"conns":  cfg.conns,
		"rooms":  cfg.rooms,
		"time":   time.Now().UTC().Format(time.RFC3339),
		"nofile": nofile,
	}
	errKindsMu.Lock()
	ek := map[string]int{}
	for k, v := range errKinds {
		ek[k] = v
	}
	errKindsMu.Unlock()
	errKindsMu.Lock()
	exm := map[string]string{}
	for k, v := range errExamples {
		if len(v) > 200 {
			v = v[:200]
		}
		exm[k] = v
	}
	errKindsMu.Unlock()
	if len(exm) > 0 && !cfg.quiet {
		for k, v := range exm {
			fmt.Fprintf(os.Stderr, "  connect error %s (x%d), e.g.: %s\n", k, ek[k], v)
		}
	}
	result["connect"] = map[string]interface{}{
		"ok": connectOK.Load(), "errors": connectFail.Load(), "error_kinds": ek, "error_examples": exm,
		"elapsed_s":  round(connElapsed.Seconds(), 3),
		"rate_per_s": round(float64(connectOK.Load())/connElapsed.Seconds(), 1),
		"p50_ms":     round(pct(connTimes, .5), 2), "p90_ms": round(pct(connTimes, .9), 2),
		"p99_ms": round(pct(connTimes, .99), 2), "max_ms": round(pct(connTimes, 1), 2),
	}
	result["join"] = map[string]interface{}{"sent": joinSent.Load(), "acked": joinAcked.Load(), "ack_requested": cfg.joinAck}
	if rcMode {
		result["join"].(map[string]interface{})["errors"] = joinErrors.Load()
		result["setup"] = "roomcast"
		result["scenario"] = cfg.scenario
		result["roomcast"] = setupInfo
	}
	if eioOpen != nil {
		eo := map[string]interface{}{}
		for k, v := range eioOpen {
			if k != "sid" {
				eo[k] = v
			}
		}
		result["eio_open"] = eo
	}

	var procMid []procSample
	var cpuMid float64
	if cfg.idle {
		// ---- idle mode: hold connections
		time.Sleep(2 * time.Second)
		procMid = readAll()
		holdStart := time.Now()
		lastReport := time.Now()
		for time.Since(holdStart) < cfg.duration && ctx.Err() == nil {
			time.Sleep(200 * time.Millisecond)
			if cfg.report > 0 && !cfg.quiet && time.Since(lastReport) >= cfg.report*5 {
				lastReport = time.Now()
				alive := 0
				for _, c := range clients {
					if c.alive.Load() {
						alive++
					}
				}
				rs := readAll()
				var rss []string
				for _, s := range rs {
					rss = append(rss, fmt.Sprintf("%d:%dMB", s.Pid, s.RssKB/1024))
				}
				fmt.Fprintf(os.Stderr, "  hold %.0fs: alive=%d pings=%d disc=%d rss=%s\n",
					time.Since(holdStart).Seconds(), alive, pingCount.Load(), disconnects.Load(), strings.Join(rss, ","))
			}
		}
		procEnd := readAll()
		alive := 0
		for _, c := range clients {
			if c.alive.Load() {
				alive++
			}
		}
		result["mode"] = "idle"
		result["hold_s"] = cfg.duration.Seconds()
		result["alive_end"] = alive
		result["pings_answered"] = pingCount.Load()
		result["disconnects"] = disconnects.Load()
		errKindsMu.Lock()
		result["disconnect_kinds"] = copyMap(discKinds)
		errKindsMu.Unlock()
		srv := []map[string]interface{}{}
		var totBase, totEnd int64
		for k, s := range procEnd {
			b := procBase[k]
			m := procMid[k]
			e := map[string]interface{}{
				"pid": s.Pid, "rss_kb_before": b.RssKB, "rss_kb_connected": m.RssKB, "rss_kb_end": s.RssKB,
				"cpu_s": round(s.CPUSec-b.CPUSec, 2),
			}
			if alive > 0 && b.RssKB >= 0 && s.RssKB >= 0 {
				e["rss_delta_kb"] = s.RssKB - b.RssKB
			}
			totBase += b.RssKB
			totEnd += s.RssKB
			srv = append(srv, e)
		}
		result["server"] = srv
		if alive > 0 && len(procEnd) > 0 {
			result["rss_per_conn_kb"] = round(float64(totEnd-totBase)/float64(alive), 2)
		}
		if len(cfg.redisPids) > 0 {
			rEnd := readRedis()
			rs := []map[string]interface{}{}
			for k, s := range rEnd {
				b := redisBase[k]
				rs = append(rs, map[string]interface{}{"pid": s.Pid, "rss_kb_before": b.RssKB, "rss_kb_end": s.RssKB,
					"rss_delta_kb": s.RssKB - b.RssKB, "cpu_s": round(s.CPUSec-b.CPUSec, 2)})
			}
			result["redis"] = rs
		}
		result["client_cpu_s"] = round(selfCPU()-cpuBase, 2)
		stopping.Store(true)
		closeAll(clients)
		emit(result)
		if !cfg.quiet {
			fmt.Fprintf(os.Stderr, "\n== sioload idle: %d/%d connected (%.1f conn/s, p99 %.1f ms), %d alive after %.0fs, %d pings answered, %d disconnects\n",
				connectOK.Load(), cfg.conns, float64(connectOK.Load())/connElapsed.Seconds(), pct(connTimes, .99), alive, cfg.duration.Seconds(), pingCount.Load(), disconnects.Load())
			for k, s := range procEnd {
				b := procBase[k]
				fmt.Fprintf(os.Stderr, "   server pid %d: RSS %.1f MB -> %.1f MB (+%.1f MB)\n", s.Pid, float64(b.RssKB)/1024, float64(s.RssKB)/1024, float64(s.RssKB-b.RssKB)/1024)
			}
			if v, ok := result["rss_per_conn_kb"]; ok {
				fmt.Fprintf(os.Stderr, "   server RSS per connection: %.2f KB\n", v)
			}
		}
		if interrupted.Load() {
			os.Exit(130)
		}
		return
	}

	// ---- load mode
	time.Sleep(cfg.settle)
	// publishers: publisher j sits in room j%R and on URL j%U.
	type pub struct {
		c    *client
		room string
		mem  int64
	}
	pubs := []pub{}
	used := map[int]bool{}
	R := cfg.rooms
	for j := 0; j < cfg.publishers; j++ {
		// prefer member k of room j%R with k%U == j%U, so publishers
		// alternate between URLs; member k of room r is conn r+k*R on URL k%U
		idx := -1
		if R > 0 {
			r := j % R
			for pass := 0; pass < 2 && idx < 0; pass++ {
				for k := 0; r+k*R < cfg.conns; k++ {
					cand := r + k*R
					if used[cand] || (pass == 0 && k%U != j%U) {
						continue
					}
					idx = cand
					break
				}
			}
		}
		if idx < 0 {
			idx = j
			for used[idx] {
				idx = (idx + 1) % cfg.conns
			}
		}
		used[idx] = true
		c := clients[idx]
		if !c.alive.Load() {
			continue
		}
		var m int64
		rn := ""
		if c.room >= 0 {
			m = members[c.room]
			rn = cfg.roomPrefix + strconv.Itoa(c.room)
			if c.roomID != "" {
				rn = c.roomID
			}
		}
		if !cfg.includeSender {
			m--
		}
		pubs = append(pubs, pub{c: c, room: rn, mem: m})
	}
	pad := strings.Repeat("x", cfg.size)
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload: %d publishers x %.1f/s for %s (target %.0f publishes/s, ~%.0f deliveries/s)\n",
			len(pubs), cfg.rate, cfg.duration, float64(len(pubs))*cfg.rate, func() float64 {
				var s float64
				for _, p := range pubs {
					s += float64(p.mem) * cfg.rate
				}
				return s
			}())
	}
	if rcMode {
		st := &rcRun{elems: map[string]*pubState{}}
		maxSeq := int(math.Ceil(cfg.rate*cfg.duration.Seconds())) + 2
		for j, p := range pubs {
			var self int64
			if cfg.includeSender && p.c.joined {
				self = 1
			}
			st.pubs = append(st.pubs, &pubState{j: j, c: p.c, room: p.room, mem: p.mem, selfExp: self,
				sent: make([]int64, maxSeq), recv: make([]uint32, maxSeq), recvSelf: make([]uint32, maxSeq)})
		}
		if cfg.scenario == "drag" {
			if err := rcCreateElements(ctx, st); err != nil {
				stopping.Store(true)
				closeAll(clients)
				fatalSetup(err)
			}
			time.Sleep(cfg.settle)
		}
		rcState.Store(st)
	}
	procMid = readAll()
	redisMid := readRedis()
	cpuMid = selfCPU()
	mBusy0, mTot0 := machineCPU()
	running.Store(true)
	pubStart := time.Now()
	pubEnd := pubStart.Add(cfg.duration)
	var pwg sync.WaitGroup
	pubInterval := time.Duration(float64(time.Second) / cfg.rate)
	for j, p := range pubs {
		pwg.Add(1)
		go func(j int, p pub) {
			defer pwg.Done()
			var ps *pubState // roomcast: per-publish send times and delivery counts
			if rcMode {
				ps = rcState.Load().pubs[j]
			}
			build := frameBuilder(j, p.room, ps, pad)
			buf := make([]byte, 0, 256+len(pad))
			// stagger publishers over one interval
			first := pubStart.Add(time.Duration(int64(pubInterval) * int64(j) / int64(len(pubs))))
			for n := int64(0); ; n++ {
				sched := first.Add(time.Duration(n) * pubInterval)
				if !sched.Before(pubEnd) || ctx.Err() != nil {
					return
				}
				if d := time.Until(sched); d > 0 {
					time.Sleep(d)
				} else if lag := -d; int64(lag) > maxPubLagNs.Load() {
					maxPubLagNs.Store(int64(lag))
				}
				if !p.c.alive.Load() {
					pubErrors.Add(1)
					continue
				}
				ts := time.Now().UnixNano()
				if cfg.tsScheduled {
					ts = sched.UnixNano()
				}
				if ps != nil { // stored before the write: a receiver may see the event at once
					if n >= int64(len(ps.sent)) {
						return
					}
					atomic.StoreInt64(&ps.sent[n], ts)
				}
				buf = build(buf[:0], ts, n)
				if err := p.c.write(buf); err != nil {
					if ps != nil {
						atomic.StoreInt64(&ps.sent[n], 0)
					}
					pubErrors.Add(1)
					continue
				}
				pubSent.Add(1)
				expected.Add(p.mem)
			}
		}(j, p)
	}
	// progress
	progDone := make(chan struct{})
	if cfg.report > 0 && !cfg.quiet {
		go func() {
			t := time.NewTicker(cfg.report)
			defer t.Stop()
			var lastR, lastP int64
			last := time.Now()
			for {
				select {
				case <-progDone:
					return
				case now := <-t.C:
					r, p := recvCount.Load(), pubSent.Load()
					dt := now.Sub(last).Seconds()
					fmt.Fprintf(os.Stderr, "  t=%4.1fs pub/s=%7.0f recv/s=%8.0f  p50=%.1fms p99=%.1fms max=%.1fms disc=%d\n",
						now.Sub(pubStart).Seconds(), float64(p-lastP)/dt, float64(r-lastR)/dt,
						latHist.quantile(.5), latHist.quantile(.99), float64(atomic.LoadInt64(&latHist.max))/1000, disconnects.Load())
					lastR, lastP, last = r, p, now
				}
			}
		}()
	}
	pwg.Wait()
	// rates are computed over the scheduled window (or longer if publishers lagged)
	pubElapsed := time.Since(pubStart)
	if pubElapsed < cfg.duration {
		pubElapsed = cfg.duration
	}
	// drain
	drainStart := time.Now()
	for time.Since(drainStart) < cfg.drain && ctx.Err() == nil {
		if recvCount.Load() >= expected.Load() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	drained := time.Since(drainStart)
	running.Store(false)
	close(progDone)
	procEnd := readAll()
	redisEnd := readRedis()
	cpuEnd := selfCPU()
	mBusy1, mTot1 := machineCPU()

	rc, ex := recvCount.Load(), expected.Load()
	lost, extra := ex-rc, int64(0)
	if lost < 0 { // more deliveries than expected: duplicates or stray members
		extra, lost = -lost, 0
	}
	if rcMode { // per-publish counts: rc holds no duplicates, so lost is exact
		extra = rcDup.Load()
	}
	pubTarget := float64(len(pubs)) * cfg.rate
	result["mode"] = "load"
	result["publishers"] = len(pubs)
	result["rate_per_publisher"] = cfg.rate
	result["duration_s"] = cfg.duration.Seconds()
	result["size"] = cfg.size
	result["include_sender"] = cfg.includeSender
	result["event"] = cfg.event
	result["recv_event"] = cfg.recvEvent
	mem := make([]int64, 0, R)
	for r := 0; r < R; r++ {
		mem = append(mem, members[r])
	}
	result["room_members"] = mem
	result["publish"] = map[string]interface{}{
		"sent": pubSent.Load(), "errors": pubErrors.Load(),
		"target_per_s":   round(pubTarget, 1),
		"achieved_per_s": round(float64(pubSent.Load())/pubElapsed.Seconds(), 1),
		"max_lag_ms":     round(float64(maxPubLagNs.Load())/1e6, 2),
	}
	lossPct := 0.0
	if ex > 0 {
		lossPct = 100 * float64(lost) / float64(ex)
	}
	result["delivery"] = map[string]interface{}{
		"expected": ex, "received": rc, "lost": lost, "extra": extra, "loss_pct": round(lossPct, 3),
		// throughput over publish window + the drain actually needed
		"delivered_per_s": round(float64(rc)/(pubElapsed+drained).Seconds(), 1),
		"offered_per_s":   round(float64(ex)/pubElapsed.Seconds(), 1),
		"drain_s":         round(drained.Seconds(), 3),
		"drain_timed_out": rc < ex,
		"other_packets":   recvOther.Load(),
		"lat_ms": map[string]interface{}{
			"p50": round(latHist.quantile(.5), 3), "p90": round(latHist.quantile(.9), 3),
			"p99": round(latHist.quantile(.99), 3), "p999": round(latHist.quantile(.999), 3),
			"max": round(float64(atomic.LoadInt64(&latHist.max))/1000, 3), "mean": round(latHist.meanMs(), 3),
		},
	}
	if rcMode {
		d := result["delivery"].(map[string]interface{})
		d["duplicates"] = rcDup.Load()
		d["unmatched"] = rcUnmatched.Load()
		d["to_unjoined_sockets"] = rcStray.Load()
		d["server_error_events"] = rcServerErrors.Load()
		if ex := rcErrExample.Load(); ex != nil {
			d["server_error_example"] = *ex
		}
		d["received_other"] = rcRecvOther.Load()
		d["received_self"] = rcRecvSelf.Load()
		if st := rcState.Load(); st != nil {
			d["lost_self"], d["lost_other"] = rcLost(st)
		}
		if cfg.scenario == "drag" { // lat_ms: the other member only; self_lat_ms: the sender's own echo
			d["lat_of"] = "other members"
			d["self_lat_ms"] = map[string]interface{}{
				"p50": round(selfHist.quantile(.5), 3), "p90": round(selfHist.quantile(.9), 3),
				"p99": round(selfHist.quantile(.99), 3), "max": round(float64(atomic.LoadInt64(&selfHist.max))/1000, 3),
				"mean": round(selfHist.meanMs(), 3),
			}
		} else {
			d["lat_of"] = "all members (sender included)"
		}
	}
	result["disconnects"] = disconnects.Load()
	errKindsMu.Lock()
	result["disconnect_kinds"] = copyMap(discKinds)
	errKindsMu.Unlock()
	srv := []map[string]interface{}{}
	var srvCPU float64
	for k, s := range procEnd {
		m := procMid[k]
		b := procBase[k]
		cpu := s.CPUSec - m.CPUSec
		srvCPU += cpu
		srv = append(srv, map[string]interface{}{
			"pid": s.Pid, "rss_kb_before": b.RssKB, "rss_kb_start": m.RssKB, "rss_kb_end": s.RssKB,
			"cpu_s": round(cpu, 2), "cpu_pct": round(100*cpu/(pubElapsed+drained).Seconds(), 1),
			"sched_cpu_s": round(s.SchedSec-m.SchedSec, 6),
		})
	}
	result["server"] = srv
	if len(procEnd) > 0 && rc > 0 {
		result["server_cpu_us_per_delivery"] = round(srvCPU*1e6/float64(rc), 3)
	}
	var redisCPU float64
	if len(redisEnd) > 0 {
		rs := []map[string]interface{}{}
		for k, s := range redisEnd {
			cpu := s.CPUSec - redisMid[k].CPUSec
			redisCPU += cpu
			rs = append(rs, map[string]interface{}{
				"pid": s.Pid, "rss_kb_start": redisMid[k].RssKB, "rss_kb_end": s.RssKB,
				"cpu_s": round(cpu, 2), "cpu_pct": round(100*cpu/(pubElapsed+drained).Seconds(), 1),
				"sched_cpu_s": round(s.SchedSec-redisMid[k].SchedSec, 6),
			})
		}
		result["redis"] = rs
		if ps := pubSent.Load(); ps > 0 {
			result["redis_cpu_us_per_publish"] = round(redisCPU*1e6/float64(ps), 3)
		}
		if rc > 0 {
			result["redis_cpu_us_per_delivery"] = round(redisCPU*1e6/float64(rc), 3)
			result["total_cpu_us_per_delivery"] = round((srvCPU+redisCPU)*1e6/float64(rc), 3)
		}
	}
	result["client_cpu_s"] = round(cpuEnd-cpuMid, 2)
	result["client_cpu_pct"] = round(100*(cpuEnd-cpuMid)/(pubElapsed+drained).Seconds(), 1)
	// noise indicator: CPU used on the machine by everything that is neither
	// the listed server PIDs nor this tool, in percent of one core.
	wall := (pubElapsed + drained).Seconds()
	var machBusyPct, otherPct float64
	if mTot1 > mTot0 {
		ncpu := float64(runtime.NumCPU())
		machBusyPct = 100 * ncpu * float64(mBusy1-mBusy0) / float64(mTot1-mTot0)
		otherPct = machBusyPct - 100*(srvCPU+redisCPU)/wall - 100*(cpuEnd-cpuMid)/wall
	}
	result["machine_busy_pct"] = round(machBusyPct, 1)
	result["other_cpu_pct"] = round(otherPct, 1)
	stopping.Store(true)
	closeAll(clients)
	emit(result)
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "\n== sioload: %d conns (%d ok, %d failed; connect p50 %.1f ms p99 %.1f ms) over %d url(s), %d rooms\n",
			cfg.conns, connectOK.Load(), connectFail.Load(), pct(connTimes, .5), pct(connTimes, .99), U, R)
		fmt.Fprintf(os.Stderr, "   published %d (%.1f/s of %.1f/s target, %d errors, max lag %.1f ms)\n",
			pubSent.Load(), float64(pubSent.Load())/pubElapsed.Seconds(), pubTarget, pubErrors.Load(), float64(maxPubLagNs.Load())/1e6)
		fmt.Fprintf(os.Stderr, "   delivered %d of %d expected (lost %d, %.3f%%), %.0f msgs/s (offered %.0f/s; drain %.2fs)\n",
			rc, ex, lost, lossPct, float64(rc)/(pubElapsed+drained).Seconds(), float64(ex)/pubElapsed.Seconds(), drained.Seconds())
		if rc < ex {
			fmt.Fprintf(os.Stderr, "   NOTE: %d deliveries still missing after the %.1fs drain: the server is backlogged (saturated) or dropped them\n",
				lost, drained.Seconds())
		}
		fmt.Fprintf(os.Stderr, "   latency ms: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  mean %.2f\n",
			latHist.quantile(.5), latHist.quantile(.9), latHist.quantile(.99), latHist.quantile(.999),
			float64(atomic.LoadInt64(&latHist.max))/1000, latHist.meanMs())
		for k, s := range procEnd {
			m := procMid[k]
			fmt.Fprintf(os.Stderr, "   server pid %d: cpu %.2fs (%.0f%%), RSS %.1f MB\n", s.Pid, s.CPUSec-m.CPUSec,
				100*(s.CPUSec-m.CPUSec)/(pubElapsed+drained).Seconds(), float64(s.RssKB)/1024)
		}
		for k, s := range redisEnd {
			m := redisMid[k]
			fmt.Fprintf(os.Stderr, "   redis pid %d: cpu %.2fs (%.0f%%), RSS %.1f MB\n", s.Pid, s.CPUSec-m.CPUSec,
				100*(s.CPUSec-m.CPUSec)/(pubElapsed+drained).Seconds(), float64(s.RssKB)/1024)
		}
		if rc > 0 && len(procEnd) > 0 {
			fmt.Fprintf(os.Stderr, "   server CPU per delivery: %.3f us", srvCPU*1e6/float64(rc))
			if len(redisEnd) > 0 && pubSent.Load() > 0 {
				fmt.Fprintf(os.Stderr, "; Redis %.3f us per delivery, %.2f us per publish; total %.3f us per delivery",
					redisCPU*1e6/float64(rc), redisCPU*1e6/float64(pubSent.Load()), (srvCPU+redisCPU)*1e6/float64(rc))
			}
			fmt.Fprintln(os.Stderr)
		}
		if rcMode {
			var ls, lo int64
			if st := rcState.Load(); st != nil {
				ls, lo = rcLost(st)
			}
			fmt.Fprintf(os.Stderr, "   roomcast %s: received by other members %d (lost %d), by the sender itself %d (lost %d); duplicates %d, unmatched %d, server error events %d",
				cfg.scenario, rcRecvOther.Load(), lo, rcRecvSelf.Load(), ls, rcDup.Load(), rcUnmatched.Load(), rcServerErrors.Load())
			if cfg.scenario == "drag" {
				fmt.Fprintf(os.Stderr, "; own echo p50 %.2f ms p99 %.2f ms; latency above = other member only",
					selfHist.quantile(.5), selfHist.quantile(.99))
			}
			if n := rcStray.Load(); n > 0 {
				fmt.Fprintf(os.Stderr, "; %d events reached sockets whose join failed or timed out (not counted)", n)
			}
			fmt.Fprintln(os.Stderr)
			if ex := rcErrExample.Load(); ex != nil {
				fmt.Fprintf(os.Stderr, "   first server error event: %s\n", *ex)
			}
		}
		fmt.Fprintf(os.Stderr, "   client cpu %.2fs, disconnects %d; machine busy %.0f%% of %d cores, of which other processes %.0f%%\n",
			cpuEnd-cpuMid, disconnects.Load(), machBusyPct, runtime.NumCPU(), otherPct)
	}
	if interrupted.Load() {
		os.Exit(130)
	}
}

func copyMap(m map[string]int) map[string]int {
	o := make(map[string]int, len(m))
	for k, v := range m {
		o[k] = v
	}
	return o
}

func closeAll(clients []*client) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	for _, c := range clients {
		if c.ws == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(c *client) {
			defer wg.Done()
			defer func() { <-sem }()
			c.wmu.Lock()
			c.ws.SetWriteDeadline(time.Now().Add(time.Second))
			c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
			c.wmu.Unlock()
			c.ws.Close()
		}(c)
	}
	wg.Wait()
}

func round(v float64, d int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

func emit(result map[string]interface{}) {
	b, err := json.Marshal(result)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sioload: json: %v\n", err)
		return
	}
	fmt.Println(string(b))
	if cfg.outFile != "" {
		if f, err := os.OpenFile(cfg.outFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Write(append(b, '\n'))
			f.Close()
		}
	}
}
