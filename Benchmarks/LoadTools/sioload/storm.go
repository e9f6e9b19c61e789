package main

// The reconnect storm (-storm): what an operator lives through when a node dies.
//
// Every socket (-conns) connects to one node (-urls) and joins its room (room i % R, as in the
// other modes). Publishers, one in each of -storm-rooms rooms (spread evenly), connect to the
// survivor (-storm-urls) and publish at -rate/s through the whole storm. After -storm-before,
// sioload sends SIGKILL to -storm-kill-pid. Every socket sees its connection end, waits as
// socket.io-client does (-storm-delay doubled per failed attempt up to -storm-delay-max, moved by
// up to -storm-jitter either way), reconnects to the survivor with its token and joins its room
// again: in roomcast mode with `since`, the last room offset it saw, so that the events it
// missed are replayed; in peer mode with a plain join (the peers keep no history).
//
// Measured: the time from the kill until each socket is back in its room (its join acked), the
// survivor's and Redis's CPU from the kill until the last one is back, less what the traffic
// alone costs them (measured for -storm-after once every socket is back), per socket back; and
// for every socket of a room with traffic, each event received exactly once or not (lost,
// duplicated), counted per socket and per publish.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stormSocket is one storm socket's own state; its reader and its life goroutine use it in turn.
type stormSocket struct {
	pub       *stormPub // the publisher of its room, nil when the room has no traffic
	recv      []uint32  // deliveries of each of pub's publishes
	offset    string    // roomcast: the last room offset seen
	offMs     int64
	offSeq    int64
	inRoom    atomic.Bool
	back      atomic.Bool  // rejoined since the kill
	rejoinNs  atomic.Int64 // kill -> its last rejoin
	rejoins   atomic.Int64
	recovered atomic.Int64 // roomcast: rejoins acked with recovered: true
}

type stormPub struct {
	k    int
	c    *client
	room int
	sent []int64 // unix ns of publish n; 0 = not sent
}

type stormRun struct {
	ctx        context.Context
	sockets    []*client
	pubs       []*stormPub
	pubOfRoom  []*stormPub
	members    []atomic.Int64 // room -> storm sockets in it from the first join
	killAt     atomic.Int64   // unix ns of the SIGKILL, 0 before
	deadline   atomic.Int64
	inRoom     atomic.Int64
	back       atomic.Int64
	attempts   atomic.Int64 // reconnection attempts
	gaveUp     atomic.Int64
	early      atomic.Int64 // disconnects before the kill
	joinErrs   atomic.Int64 // rejoins refused or unanswered
	firstRecv  atomic.Int64 // (socket, publish) pairs received at least once
	dups       atomic.Int64
	unmatched  atomic.Int64
	srvErrors  atomic.Int64
	recovered  atomic.Int64
	notRecov   atomic.Int64
	errMu      sync.Mutex
	connErrs   map[string]int
	errExample map[string]string
}

var storm *stormRun

func (s *stormRun) connErr(kind, example string) {
	s.errMu.Lock()
	s.connErrs[kind]++
	if _, ok := s.errExample[kind]; !ok {
		if len(example) > 200 {
			example = example[:200]
		}
		s.errExample[kind] = example
	}
	s.errMu.Unlock()
}

// stormEvent handles one EVENT packet body `["name",{...}]` of a storm socket.
func stormEvent(c *client, body []byte, now int64) {
	ss := c.storm
	name, rest, ok := eventName(body)
	if !ok {
		recvOther.Add(1)
		return
	}
	if rcMode {
		// Every room event ends with its offset: `,"offset":"<ms>-<seq>"}]`.
		if k := bytes.LastIndex(rest, []byte(`"offset":"`)); k >= 0 {
			v := rest[k+10:]
			if e := bytes.IndexByte(v, '"'); e > 0 {
				ss.noteOffset(string(v[:e]))
			}
		}
	}
	if string(name) == "error" {
		storm.srvErrors.Add(1)
		return
	}
	if string(name) != cfg.recvEvent {
		recvOther.Add(1)
		return
	}
	var pj, seq int64
	if rcMode {
		v := valueAfterKey(rest, []byte(`"text"`))
		if len(v) == 0 || v[0] != '"' {
			storm.unmatched.Add(1)
			return
		}
		_, v, ok1 := taggedInt(v[1:], "ts=")
		p, v, ok2 := taggedInt(v, ";p=")
		n, _, ok3 := taggedInt(v, ";seq=")
		if !ok1 || !ok2 || !ok3 {
			storm.unmatched.Add(1)
			return
		}
		pj, seq = p, n
	} else {
		n, ok := parseIntNumber(valueAfterKey(rest, []byte(`"seq"`)))
		if !ok || ss.pub == nil {
			storm.unmatched.Add(1)
			return
		}
		pj, seq = int64(ss.pub.k), n
	}
	p := ss.pub
	if p == nil || pj != int64(p.k) || seq < 0 || seq >= int64(len(p.sent)) || atomic.LoadInt64(&p.sent[seq]) == 0 {
		storm.unmatched.Add(1)
		return
	}
	if atomic.AddUint32(&ss.recv[seq], 1) == 1 {
		storm.firstRecv.Add(1)
		recvCount.Add(1)
	} else {
		storm.dups.Add(1)
	}
}

// noteOffset keeps the newest room offset seen (stream ids `<ms>-<seq>`).
func (ss *stormSocket) noteOffset(o string) {
	dash := strings.IndexByte(o, '-')
	if dash <= 0 {
		return
	}
	ms, err1 := strconv.ParseInt(o[:dash], 10, 64)
	seq, err2 := strconv.ParseInt(o[dash+1:], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	if ss.offset == "" || ms > ss.offMs || (ms == ss.offMs && seq > ss.offSeq) {
		ss.offset, ss.offMs, ss.offSeq = o, ms, seq
	}
}

// stormJoin sends room:join (roomcast: with since, the last offset the socket saw on its
// connection before, if any) and waits for its ack; true when the ack says the missed events
// were replayed.
func (s *stormRun) stormJoin(c *client, since string) (bool, error) {
	for { // an ack left over from the connection before
		select {
		case <-c.ackCh:
			continue
		default:
		}
		break
	}
	room := cfg.roomPrefix + strconv.Itoa(c.room)
	if c.roomID != "" {
		room = c.roomID
	}
	args := map[string]string{"roomId": room}
	if rcMode && !cfg.stormNoRecovery && since != "" {
		args["since"] = since
	}
	payload, _ := json.Marshal([]interface{}{cfg.joinEvent, args})
	if err := c.write([]byte("42" + nsPrefix() + "1" + string(payload))); err != nil {
		return false, err
	}
	select {
	case a := <-c.ackCh:
		if rcMode {
			if e := ackError(a.body); e != "" {
				return false, fmt.Errorf("sio:join_error %s", e)
			}
			return bytes.Contains(a.body, []byte(`"recovered":true`)), nil
		}
		if !bytes.HasPrefix(bytes.TrimSpace(a.body), []byte("[true")) && len(a.body) > 0 {
			return false, fmt.Errorf("sio:join_refused %s", trunc(a.body))
		}
		return false, nil
	case <-time.After(cfg.joinTimeout):
		return false, fmt.Errorf("sio:join_ack_timeout")
	case <-s.ctx.Done():
		return false, s.ctx.Err()
	}
}

// life runs one storm socket from its first join until sioload stops: read, and when the
// connection ends, reconnect to the survivor and join again. The first join's outcome goes to
// first.
func (s *stormRun) life(c *client, first chan<- error) {
	ss := c.storm
	for {
		// Read before the reader starts: it notes the offsets of the new connection's events.
		since := ss.offset
		var wg sync.WaitGroup
		wg.Add(1)
		go c.readLoop(&wg)
		recovered, err := s.stormJoin(c, since)
		if first != nil {
			first <- err
			first = nil
			if err != nil {
				c.ws.Close()
				wg.Wait()
				return
			}
			s.members[c.room].Add(1)
			c.member.Store(true)
		}
		if err == nil {
			ss.inRoom.Store(true)
			s.inRoom.Add(1)
			if k := s.killAt.Load(); k != 0 {
				ss.rejoinNs.Store(time.Now().UnixNano() - k)
				ss.rejoins.Add(1)
				if recovered {
					s.recovered.Add(1)
					ss.recovered.Add(1)
				} else if rcMode && since != "" && !cfg.stormNoRecovery {
					s.notRecov.Add(1)
				}
				if !ss.back.Swap(true) {
					s.back.Add(1)
				}
			}
		} else {
			s.joinErrs.Add(1)
			s.connErr(classifyErr(err), err.Error())
			c.ws.Close()
		}
		wg.Wait()
		c.ws.Close()
		if ss.inRoom.Swap(false) {
			s.inRoom.Add(-1)
		}
		if stopping.Load() || s.ctx.Err() != nil {
			return
		}
		if s.killAt.Load() == 0 {
			s.early.Add(1)
		}
		if !s.reconnect(c) {
			s.gaveUp.Add(1)
			return
		}
	}
}

// backoff is socket.io-client's: the delay doubles per attempt up to the maximum, then moves by
// up to jitter of itself, either way.
func backoff(attempt int) time.Duration {
	d := float64(cfg.stormDelay) * math.Pow(2, float64(attempt))
	if d > float64(cfg.stormDelayMax) {
		d = float64(cfg.stormDelayMax)
	}
	dev := rand.Float64() * cfg.stormJitter * d
	if rand.Intn(2) == 0 {
		d -= dev
	} else {
		d += dev
	}
	if d > float64(cfg.stormDelayMax) {
		d = float64(cfg.stormDelayMax)
	}
	return time.Duration(d)
}

// reconnect opens a new connection to the survivor, retrying with backoff; false once the
// storm's deadline passed or sioload stops.
func (s *stormRun) reconnect(c *client) bool {
	for attempt := 0; ; attempt++ {
		select {
		case <-time.After(backoff(attempt)):
		case <-s.ctx.Done():
			return false
		}
		if d := s.deadline.Load(); d != 0 && time.Now().UnixNano() > d {
			return false
		}
		if stopping.Load() {
			return false
		}
		c.url = cfg.stormURLs[c.id%len(cfg.stormURLs)]
		s.attempts.Add(1)
		if err := c.connect(s.ctx); err != nil {
			s.connErr(classifyErr(err), err.Error())
			continue
		}
		return true
	}
}

func runStorm(ctx context.Context, setupInfo map[string]interface{}, nofile uint64) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	R := cfg.rooms
	s := &stormRun{ctx: ctx, pubOfRoom: make([]*stormPub, R), members: make([]atomic.Int64, R),
		connErrs: map[string]int{}, errExample: map[string]string{}}
	storm = s
	S := cfg.stormRooms
	if S > R {
		S = R
	}
	if S < 0 {
		S = 0
	}
	seqs := int(math.Ceil(cfg.rate*(cfg.stormBefore+cfg.stormTimeout+cfg.stormAfter+cfg.drain+30*time.Second).Seconds())) + 2
	for k := 0; k < S; k++ {
		r := k * R / S
		// The publisher is a second socket of the room's first member (connection r), on the survivor.
		c := &client{id: cfg.conns + k, url: cfg.stormURLs[k%len(cfg.stormURLs)], room: r, ackCh: make(chan ackMsg, 1)}
		if rcMode {
			c.token = rcUsers[r%len(rcUsers)].token
			c.roomID = rcRoomIDs[r]
		} else {
			c.token = peerToken(r)
		}
		p := &stormPub{k: k, c: c, room: r, sent: make([]int64, seqs)}
		s.pubs = append(s.pubs, p)
		s.pubOfRoom[r] = p
	}
	s.sockets = make([]*client, cfg.conns)
	for i := range s.sockets {
		r := i % R
		c := &client{id: i, url: cfg.urls[0], room: r, ackCh: make(chan ackMsg, 1), storm: &stormSocket{pub: s.pubOfRoom[r]}}
		if c.storm.pub != nil {
			c.storm.recv = make([]uint32, seqs)
		}
		if rcMode {
			c.token = rcUsers[i%len(rcUsers)].token
			c.roomID = rcRoomIDs[r]
		} else {
			c.token = peerToken(i)
		}
		s.sockets[i] = c
	}

	// ---- every socket on the node to be killed, in its room
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload storm: connecting %d sockets to %s, %d rooms, nofile=%d\n", cfg.conns, cfg.urls[0], R, nofile)
	}
	connStart := time.Now()
	var firstJoinErrs atomic.Int64
	{
		sem := make(chan struct{}, cfg.connConc)
		var wg sync.WaitGroup
		for _, c := range s.sockets {
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func(c *client) {
				defer wg.Done()
				defer func() { <-sem }()
				if err := c.connect(ctx); err != nil {
					connectFail.Add(1)
					s.connErr("initial_"+classifyErr(err), err.Error())
					return
				}
				connectOK.Add(1)
				first := make(chan error, 1)
				go s.life(c, first)
				if err := <-first; err != nil {
					firstJoinErrs.Add(1)
					s.connErr("initial_"+classifyErr(err), err.Error())
				}
			}(c)
		}
		wg.Wait()
	}
	connElapsed := time.Since(connStart)
	var joined int64
	for r := range s.members {
		joined += s.members[r].Load()
	}
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload storm: %d/%d connected and joined in %.1fs (%d connect errors, %d join errors)\n",
			joined, cfg.conns, connElapsed.Seconds(), connectFail.Load(), firstJoinErrs.Load())
	}
	if joined == 0 {
		s.errMu.Lock()
		fmt.Fprintf(os.Stderr, "sioload storm: no socket joined: %v\n", s.errExample)
		s.errMu.Unlock()
		os.Exit(1)
	}
	// ---- the publishers, on the survivor
	var readers sync.WaitGroup
	for _, p := range s.pubs {
		c := p.c
		if err := c.connect(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "sioload storm: publisher %d cannot connect: %v\n", p.k, err)
			os.Exit(1)
		}
		readers.Add(1)
		go c.readLoop(&readers)
		if err := c.join(1); err != nil {
			fmt.Fprintf(os.Stderr, "sioload storm: publisher %d cannot join: %v\n", p.k, err)
			os.Exit(1)
		}
		select {
		case a := <-c.ackCh:
			if e := ackError(a.body); rcMode && e != "" {
				fmt.Fprintf(os.Stderr, "sioload storm: publisher %d's join refused: %s\n", p.k, e)
				os.Exit(1)
			}
		case <-time.After(cfg.joinTimeout):
			fmt.Fprintf(os.Stderr, "sioload storm: publisher %d's join not acked\n", p.k)
			os.Exit(1)
		}
	}
	time.Sleep(cfg.settle)

	// ---- traffic, until told to stop
	stopPub := make(chan struct{})
	var pwg sync.WaitGroup
	pad := strings.Repeat("x", cfg.size)
	var published atomic.Int64
	pubStart := time.Now()
	interval := time.Duration(float64(time.Second) / cfg.rate)
	for _, p := range s.pubs {
		pwg.Add(1)
		go func(p *stormPub) {
			defer pwg.Done()
			room := cfg.roomPrefix + strconv.Itoa(p.room)
			if p.c.roomID != "" {
				room = p.c.roomID
			}
			build := frameBuilder(p.k, room, nil, pad)
			buf := make([]byte, 0, 256+len(pad))
			first := pubStart.Add(time.Duration(int64(interval) * int64(p.k) / int64(len(s.pubs))))
			for n := int64(0); n < int64(len(p.sent)); n++ {
				sched := first.Add(time.Duration(n) * interval)
				select {
				case <-stopPub:
					return
				case <-time.After(time.Until(sched)):
				}
				ts := time.Now().UnixNano()
				atomic.StoreInt64(&p.sent[n], ts)
				buf = build(buf[:0], ts, n)
				if err := p.c.write(buf); err != nil {
					atomic.StoreInt64(&p.sent[n], 0)
					pubErrors.Add(1)
					continue
				}
				pubSent.Add(1)
				published.Add(1)
			}
		}(p)
	}
	select {
	case <-time.After(cfg.stormBefore):
	case <-ctx.Done():
	}

	// ---- the kill
	srv0, red0, self0 := readAll(), readRedis(), selfCPU()
	mb0, mt0 := machineCPU()
	kill := time.Now()
	s.killAt.Store(kill.UnixNano())
	s.deadline.Store(kill.Add(cfg.stormTimeout).UnixNano())
	if err := syscall.Kill(cfg.stormKillPid, syscall.SIGKILL); err != nil {
		fmt.Fprintf(os.Stderr, "sioload storm: kill %d: %v\n", cfg.stormKillPid, err)
		os.Exit(1)
	}
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload storm: SIGKILL to %d; %d sockets to bring back to %s\n", cfg.stormKillPid, joined, strings.Join(cfg.stormURLs, ","))
	}
	// A survivor that dies (the storm may be what kills it) is reported, with when.
	var survivorDied atomic.Int64 // ns after the kill, 0 while every -server-pid lives
	go func() {
		for ctx.Err() == nil && survivorDied.Load() == 0 {
			for _, pid := range cfg.serverPids {
				if syscall.Kill(pid, 0) == syscall.ESRCH {
					survivorDied.Store(int64(time.Since(kill)))
					fmt.Fprintf(os.Stderr, "sioload storm: the survivor (pid %d) died %.1fs after the kill\n", pid, time.Since(kill).Seconds())
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	lastReport := time.Now()
	for ctx.Err() == nil && time.Now().Before(kill.Add(cfg.stormTimeout)) {
		if s.back.Load() >= joined && s.inRoom.Load() >= joined || survivorDied.Load() != 0 {
			break
		}
		if cfg.report > 0 && !cfg.quiet && time.Since(lastReport) >= cfg.report {
			lastReport = time.Now()
			s.errMu.Lock()
			kinds := fmt.Sprint(s.connErrs)
			s.errMu.Unlock()
			fmt.Fprintf(os.Stderr, "  t=%5.1fs back %d/%d, in rooms %d, attempts %d, errors %s\n",
				time.Since(kill).Seconds(), s.back.Load(), joined, s.inRoom.Load(), s.attempts.Load(), kinds)
		}
		time.Sleep(5 * time.Millisecond)
	}
	done := time.Now()
	srv1, red1, self1 := readAll(), readRedis(), selfCPU()
	mb1, mt1 := machineCPU()
	allBack := s.back.Load() >= joined
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "sioload storm: %d/%d back after %.2fs\n", s.back.Load(), joined, done.Sub(kill).Seconds())
	}

	// ---- the traffic alone, every socket back: the baseline
	select {
	case <-time.After(cfg.stormAfter):
	case <-ctx.Done():
	}
	after := time.Now()
	srv2, red2 := readAll(), readRedis()
	close(stopPub)
	pwg.Wait()

	// ---- drain: every socket of a room with traffic should hold every publish once
	var expected int64
	for _, p := range s.pubs {
		for n := range p.sent {
			if atomic.LoadInt64(&p.sent[n]) != 0 {
				expected += s.members[p.room].Load()
			}
		}
	}
	drainStart := time.Now()
	for time.Since(drainStart) < cfg.drain && ctx.Err() == nil && s.firstRecv.Load() < expected {
		time.Sleep(20 * time.Millisecond)
	}
	drained := time.Since(drainStart)
	stopping.Store(true)
	cancel()

	// ---- counts per socket and publish
	var lost, lostInGap int64
	for _, c := range s.sockets {
		ss := c.storm
		if ss.pub == nil || !c.member.Load() {
			continue
		}
		for n := range ss.pub.sent {
			sent := atomic.LoadInt64(&ss.pub.sent[n])
			if sent == 0 || atomic.LoadUint32(&ss.recv[n]) > 0 {
				continue
			}
			lost++
			if sent >= kill.UnixNano() && sent <= done.UnixNano() {
				lostInGap++
			}
		}
	}
	rejoin := make([]float64, 0, joined)
	var attemptsPerSocket int64
	for _, c := range s.sockets {
		if c.storm.back.Load() {
			rejoin = append(rejoin, float64(c.storm.rejoinNs.Load())/1e9)
		}
		attemptsPerSocket += c.storm.rejoins.Load()
	}
	sort.Float64s(rejoin)
	q := func(p float64) float64 {
		if len(rejoin) == 0 {
			return 0
		}
		k := int(math.Ceil(p*float64(len(rejoin)))) - 1
		if k < 0 {
			k = 0
		}
		return round(rejoin[k], 3)
	}

	window := done.Sub(kill).Seconds()
	base := after.Sub(done).Seconds()
	back := s.back.Load()
	srvRaw, redRaw := sumCPU(srv0, srv1), sumCPU(red0, red1)
	srvBase, redBase := 0.0, 0.0
	if base > 0 {
		srvBase, redBase = sumCPU(srv1, srv2)/base, sumCPU(red1, red2)/base
	}
	// The traffic's baseline is taken off only when the storm ended with every socket back and
	// the survivor alive: else the baseline window holds the storm's own retries (or nothing).
	complete := allBack && survivorDied.Load() == 0
	net := func(raw, perS float64) float64 {
		if !complete {
			return raw
		}
		return math.Max(0, raw-perS*window)
	}
	perReconnect := func(cpu float64) float64 {
		if back == 0 {
			return 0
		}
		return round(cpu*1e6/float64(back), 1)
	}
	// A dead survivor's CPU cannot be read: no figure rather than a wrong one.
	survivorFigure := func(v float64) interface{} {
		if survivorDied.Load() != 0 {
			return nil
		}
		return v
	}
	var busyPct, otherPct float64
	if mt1 > mt0 {
		ncpu := float64(runtime.NumCPU())
		busyPct = 100 * ncpu * float64(mb1-mb0) / float64(mt1-mt0)
		otherPct = busyPct - 100*(srvRaw+redRaw+(self1-self0))/window
	}
	s.errMu.Lock()
	kinds, examples := copyMap(s.connErrs), map[string]string{}
	for k, v := range s.errExample {
		examples[k] = v
	}
	s.errMu.Unlock()
	st := map[string]interface{}{
		"sockets": joined, "rooms": R, "traffic_rooms": len(s.pubs), "rate_per_room": cfg.rate,
		"killed_pid": cfg.stormKillPid, "victim_url": cfg.urls[0], "survivor_urls": cfg.stormURLs,
		"all_back": allBack, "back": back, "not_back": joined - back, "gave_up": s.gaveUp.Load(),
		"last_rejoin_s": q(1), "rejoin_s": map[string]interface{}{"p50": q(.5), "p90": q(.9), "p99": q(.99), "max": q(1)},
		"rejoins": attemptsPerSocket, "reconnect_attempts": s.attempts.Load(), "disconnects_before_kill": s.early.Load(),
		"errors": kinds, "error_examples": examples, "join_errors": s.joinErrs.Load(),
		"window_s": round(window, 3), "baseline_s": round(base, 3),
		"survivor_cpu_s": round(srvRaw, 3), "redis_cpu_s": round(redRaw, 3),
		"survivor_baseline_cpu_per_s": round(srvBase, 4), "redis_baseline_cpu_per_s": round(redBase, 4),
		"complete":                          complete,
		"survivor_cpu_us_per_reconnect":     survivorFigure(perReconnect(net(srvRaw, srvBase))),
		"redis_cpu_us_per_reconnect":        perReconnect(net(redRaw, redBase)),
		"total_cpu_us_per_reconnect":        survivorFigure(perReconnect(net(srvRaw, srvBase) + net(redRaw, redBase))),
		"survivor_cpu_us_per_reconnect_raw": survivorFigure(perReconnect(srvRaw)),
		"redis_cpu_us_per_reconnect_raw":    perReconnect(redRaw),
		"events": map[string]interface{}{
			"published": published.Load(), "publish_errors": pubErrors.Load(), "expected": expected,
			"received": s.firstRecv.Load(), "lost": lost, "lost_sent_during_storm": lostInGap,
			"duplicates": s.dups.Load(), "unmatched": s.unmatched.Load(), "server_error_events": s.srvErrors.Load(),
			"drain_s": round(drained.Seconds(), 3),
		},
		"survivor_died": survivorDied.Load() != 0, "survivor_died_after_s": round(float64(survivorDied.Load())/1e9, 1),
		"machine_busy_pct": round(busyPct, 1), "other_cpu_pct": round(otherPct, 1),
		"client_cpu_pct": round(100*(self1-self0)/window, 1),
	}
	if rcMode {
		st["recovered"] = s.recovered.Load()
		st["not_recovered"] = s.notRecov.Load()
		st["since"] = !cfg.stormNoRecovery
	}
	result := map[string]interface{}{
		"tool": "sioload", "label": cfg.label, "mode": "storm", "urls": cfg.urls, "conns": cfg.conns, "rooms": R,
		"time": time.Now().UTC().Format(time.RFC3339), "nofile": nofile,
		"connect": map[string]interface{}{"ok": connectOK.Load(), "errors": connectFail.Load(),
			"elapsed_s": round(connElapsed.Seconds(), 3), "join_errors": firstJoinErrs.Load()},
		"storm": st,
	}
	if rcMode {
		result["setup"] = "roomcast"
		result["roomcast"] = setupInfo
	}
	closeAll(append(append([]*client{}, s.sockets...), pubClients(s.pubs)...))
	emit(result)
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "\n== sioload storm: %d sockets, node %d killed; %d back in %.2fs (p50 %.2fs, p99 %.2fs), %d reconnection attempts\n",
			joined, cfg.stormKillPid, back, q(1), q(.5), q(.99), s.attempts.Load())
		if complete {
			fmt.Fprintf(os.Stderr, "   survivor %.1f µs and Redis %.1f µs of CPU per socket back (%.1f / %.1f before taking off the traffic's %.3f / %.3f s per s)\n",
				perReconnect(net(srvRaw, srvBase)), perReconnect(net(redRaw, redBase)), perReconnect(srvRaw), perReconnect(redRaw), srvBase, redBase)
		} else {
			fmt.Fprintf(os.Stderr, "   NOT every socket came back: %d not back; CPU from the kill to the end of the wait, per socket back: survivor %.1f µs, Redis %.1f µs\n",
				joined-back, perReconnect(srvRaw), perReconnect(redRaw))
		}
		fmt.Fprintf(os.Stderr, "   events: %d published in %d rooms, %d of %d deliveries received, %d lost (%d of them sent between the kill and the last rejoin), %d duplicated, %d unmatched\n",
			published.Load(), len(s.pubs), s.firstRecv.Load(), expected, lost, lostInGap, s.dups.Load(), s.unmatched.Load())
		if rcMode {
			fmt.Fprintf(os.Stderr, "   rejoins with since: %d recovered by replay, %d got a snapshot\n", s.recovered.Load(), s.notRecov.Load())
		}
		if len(kinds) > 0 {
			for k, v := range examples {
				fmt.Fprintf(os.Stderr, "   error %s (x%d), e.g.: %s\n", k, kinds[k], v)
			}
		}
		if d := survivorDied.Load(); d != 0 {
			fmt.Fprintf(os.Stderr, "   THE SURVIVOR DIED %.1fs after the kill: the figures above stop there\n", float64(d)/1e9)
		}
		fmt.Fprintf(os.Stderr, "   machine busy %.0f%% of %d cores during the storm, other processes %.0f%%\n", busyPct, runtime.NumCPU(), otherPct)
	}
}

func pubClients(ps []*stormPub) []*client {
	out := make([]*client, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.c)
	}
	return out
}
