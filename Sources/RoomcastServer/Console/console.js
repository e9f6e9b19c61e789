// Roomcast console: a plain client of the gateway's public REST API and of its Socket.IO v5
// endpoint (Engine.IO v4 over the browser's WebSocket). No library, no build step.
// User text only ever reaches the page through textContent or attributes, never as markup.
"use strict";

(() => {
  const SESSION_KEY = "roomcast.console.session";
  const ACK_TIMEOUT_MS = 10000;
  const DRAG_SEND_INTERVAL_MS = 100;

  // ---------------------------------------------------------------------------------------------
  // Engine.IO v4 / Socket.IO v5 over WebSocket (namespace "/", text packets only).

  /** One Socket.IO connection that reconnects by itself and tells its owner what happens. */
  class SocketIOClient {
    /**
     * @param {() => string} token the JWT for each CONNECT
     * @param {object} on callbacks: state(name), connect(), connectError(payload), event(name, data)
     */
    constructor(token, on) {
      this.token = token;
      this.on = on;
      this.ws = null;
      this.acks = new Map();
      this.nextAck = 0;
      this.connected = false;
      this.closedByUser = false;
      this.retry = 0;
      this.watchdog = null;
      this.pingDeadline = 45000;
    }

    open() {
      this.closedByUser = false;
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const ws = new WebSocket(`${scheme}//${location.host}/socket.io/?EIO=4&transport=websocket`);
      this.ws = ws;
      this.on.state("connecting");
      ws.onmessage = (message) => { if (this.ws === ws) this.receive(String(message.data)); };
      ws.onclose = () => { if (this.ws === ws) this.lost(); };
      ws.onerror = () => {};
    }

    close() {
      this.closedByUser = true;
      clearTimeout(this.watchdog);
      if (this.ws) {
        const ws = this.ws;
        this.ws = null;
        try { ws.send("41"); } catch (_) { /* already closing */ }
        ws.close();
      }
      this.failAcks("disconnected");
      this.connected = false;
      this.on.state("offline");
    }

    /** Emits an event; resolves with the ack's payload (`{data}` or `{error}`). */
    emit(name, data) {
      return new Promise((resolve, reject) => {
        if (!this.connected) { reject(new Error("not connected")); return; }
        const id = this.nextAck++;
        const timer = setTimeout(() => { this.acks.delete(id); reject(new Error(`${name}: no answer`)); }, ACK_TIMEOUT_MS);
        this.acks.set(id, { resolve, reject, timer });
        this.ws.send(`42${id}${JSON.stringify([name, data])}`);
      });
    }

    receive(text) {
      this.armWatchdog();
      switch (text[0]) {
        case "0": { // Engine.IO open: handshake data, then the Socket.IO CONNECT with the token
          const open = JSON.parse(text.slice(1));
          this.pingDeadline = (open.pingInterval || 25000) + (open.pingTimeout || 20000);
          this.armWatchdog();
          this.ws.send(`40${JSON.stringify({ token: this.token() })}`);
          break;
        }
        case "2": this.ws.send("3"); break; // ping → pong
        case "1": this.ws.close(); break;   // server closes
        case "4": this.packet(text.slice(1)); break;
        default: break;
      }
    }

    /** A Socket.IO packet: type, optional namespace, optional ack id, JSON. */
    packet(text) {
      const type = text[0];
      let rest = text.slice(1);
      if (rest.startsWith("/")) { // a namespace: only "/" is used here
        const comma = rest.indexOf(",");
        rest = comma < 0 ? "" : rest.slice(comma + 1);
      }
      const digits = /^\d*/.exec(rest)[0];
      const id = digits ? Number(digits) : null;
      const body = rest.slice(digits.length);
      const payload = body ? JSON.parse(body) : null;
      switch (type) {
        case "0":
          this.connected = true;
          this.retry = 0;
          this.on.state("connected");
          this.on.connect();
          break;
        case "1": this.ws.close(); break;
        case "4": // CONNECT_ERROR: a bad token will not get better by retrying
          this.closedByUser = true;
          this.on.connectError(payload || {});
          this.ws.close();
          break;
        case "2":
          if (Array.isArray(payload) && typeof payload[0] === "string") this.on.event(payload[0], payload[1]);
          break;
        case "3": {
          const pending = this.acks.get(id);
          if (pending) {
            this.acks.delete(id);
            clearTimeout(pending.timer);
            pending.resolve(Array.isArray(payload) ? payload[0] : payload);
          }
          break;
        }
        default: break;
      }
    }

    /** Closes a connection on which the server has been silent past its ping deadline. */
    armWatchdog() {
      clearTimeout(this.watchdog);
      this.watchdog = setTimeout(() => { if (this.ws) this.ws.close(); }, this.pingDeadline);
    }

    failAcks(reason) {
      for (const pending of this.acks.values()) { clearTimeout(pending.timer); pending.reject(new Error(reason)); }
      this.acks.clear();
    }

    lost() {
      clearTimeout(this.watchdog);
      this.ws = null;
      this.connected = false;
      this.failAcks("connection lost");
      if (this.closedByUser) { this.on.state("offline"); return; }
      this.on.state("connecting");
      const delay = Math.min(10000, 500 * 2 ** this.retry++) * (0.5 + Math.random() / 2);
      setTimeout(() => { if (!this.closedByUser && !this.ws) this.open(); }, delay);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // REST

  class ApiError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }

  async function api(method, path, body) {
    const headers = { Accept: "application/json" };
    if (state.session) headers.Authorization = `Bearer ${state.session.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    let json = null;
    try { json = await response.json(); } catch (_) { /* an empty or non-JSON body */ }
    if (!response.ok) {
      const error = (json && json.error) || {};
      if (response.status === 401 && state.session && !path.startsWith("/api/auth/")) signOut("Your session has ended: sign in again.");
      throw new ApiError(response.status, error.code || "http_" + response.status, error.message || response.statusText);
    }
    return json;
  }

  // ---------------------------------------------------------------------------------------------
  // State

  const state = {
    session: null,      // {token, user}
    socket: null,
    people: [],         // grouped-by-person
    listings: new Map(), // roomId → my-rooms listing (room + badges)
    room: null,         // {id, room, elements: Map, offset, presence: Set}
    selected: null,     // element id
    drag: null,
    editing: null,      // id of the note whose text is being edited
    unread: 0,
  };

  const $ = (id) => document.getElementById(id);

  /** Makes an element with a class and text (never markup). */
  function make(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function userLabel(user) {
    if (!user) return "someone";
    return user.displayName || user.username || user.id;
  }

  function roomLabel(room) {
    return (room && room.name) || "Untitled room";
  }

  /** A stable pastel colour per user id. */
  function colorFor(id, lightness = 88) {
    let hash = 0;
    for (const char of String(id || "")) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    return `hsl(${hash % 360} 75% ${lightness}%)`;
  }

  /** Each person's notes keep one paper colour. */
  const NOTE_COLORS = ["#fff4b8", "#ffdfe8", "#d9efff", "#dcf5d9", "#ebe1ff", "#ffe6cc"];
  function noteColor(userId) {
    let hash = 0;
    for (const char of String(userId || "")) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    return NOTE_COLORS[hash % NOTE_COLORS.length];
  }

  function toast(text) {
    const node = make("div", "toast", text);
    $("toasts").append(node);
    setTimeout(() => node.remove(), 4000);
  }

  function showError(id, error) {
    $(id).textContent = error ? (error.message || String(error)) : "";
  }

  // ---------------------------------------------------------------------------------------------
  // Sign in and out

  async function signIn(kind) {
    showError("sign-in-error", null);
    const username = $("username").value.trim();
    const password = $("password").value;
    const body = { username, password };
    const displayName = $("display-name").value.trim();
    if (kind === "register" && displayName) body.displayName = displayName;
    try {
      const json = await api("POST", `/api/auth/${kind}`, body);
      startSession(json.data);
    } catch (error) {
      showError("sign-in-error", error);
    }
  }

  function startSession(session) {
    state.session = session;
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
    $("password").value = "";
    $("sign-in-view").hidden = true;
    $("app-view").hidden = false;
    $("session-bar").hidden = false;
    $("me").textContent = userLabel(session.user);
    $("me").title = `@${session.user.username} · ${session.user.id}`;
    state.socket = new SocketIOClient(() => state.session.token, {
      state: setConnectionState,
      connect: onSocketConnect,
      connectError: (payload) => {
        const code = payload.data && payload.data.code;
        if (code === "unauthorized" || code === "token_expired") signOut("Your session has ended: sign in again.");
        else toast(`Connection refused: ${payload.message || code || "unknown reason"}`);
      },
      event: onSocketEvent,
    });
    state.socket.open();
    refreshLists();
    refreshUnread();
    const linked = /^#room=([^&]+)$/.exec(location.hash);
    if (linked) openRoom(decodeURIComponent(linked[1]));
  }

  function signOut(message) {
    if (state.socket) state.socket.close();
    state.socket = null;
    state.session = null;
    state.room = null;
    state.people = [];
    state.listings = new Map();
    sessionStorage.removeItem(SESSION_KEY);
    $("app-view").hidden = true;
    $("session-bar").hidden = true;
    $("sign-in-view").hidden = false;
    $("canvas").replaceChildren();
    $("room-inner").hidden = true;
    $("no-room").hidden = false;
    history.replaceState(null, "", location.pathname);
    showError("sign-in-error", message ? new Error(message) : null);
  }

  function setConnectionState(name) {
    const node = $("connection-status");
    node.dataset.state = name;
    node.textContent = name;
    if (name !== "connected") delete $("room-view").dataset.joined;
  }

  // ---------------------------------------------------------------------------------------------
  // Rooms grouped by person, with counts and badges

  let refreshTimer = null;
  function refreshListsSoon() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refreshLists, 150);
  }

  async function refreshLists() {
    if (!state.session) return;
    try {
      const [people, mine] = await Promise.all([api("GET", "/api/rooms/grouped-by-person"), api("GET", "/api/rooms/my-rooms")]);
      state.people = people.data;
      state.listings = new Map(mine.data.map((listing) => [listing.id, listing]));
      renderPeople();
    } catch (error) {
      toast(`Could not load rooms: ${error.message}`);
    }
  }

  async function refreshUnread() {
    try {
      const json = await api("GET", "/api/notifications/unread-count");
      setUnread(json.data.unreadCount);
    } catch (_) { /* shown on the next badge event */ }
  }

  function setUnread(count) {
    state.unread = count;
    const badge = $("notification-badge");
    badge.textContent = String(count);
    badge.hidden = !count;
  }

  function renderPeople() {
    const list = $("people");
    const openId = state.room && state.room.id;
    const nodes = [];
    for (const person of state.people) {
      const block = make("div", "person");
      block.dataset.testid = "person";
      block.dataset.userId = person.id;
      const head = make("div", "person-head");
      const avatar = make("span", "avatar", (userLabel(person)[0] || "?").toUpperCase());
      avatar.style.background = colorFor(person.id, 55);
      const names = make("div");
      names.append(make("div", "person-name", userLabel(person)), make("div", "person-handle", `@${person.username}`));
      head.append(avatar, names);
      block.append(head);
      for (const summary of person.rooms) {
        const listing = state.listings.get(summary.id);
        const button = make("button", "room-item" + (summary.id === openId ? " open" : ""));
        button.type = "button";
        button.dataset.testid = "room-item";
        button.dataset.roomId = summary.id;
        if (listing ? listing.isActive : summary.isActive) button.append(make("span", "active-dot"));
        const text = make("span", "room-text");
        const name = make("span", "room-name", roomLabel(listing || summary));
        name.title = roomLabel(listing || summary);
        const count = listing ? listing.elementCount : summary.elementCount;
        const countNode = make("span", "count", `${count} ${count === 1 ? "element" : "elements"}`);
        countNode.dataset.testid = "room-count";
        text.append(name, countNode);
        button.append(text);
        const unseen = listing ? listing.badges.elements + listing.badges.messages : 0;
        if (unseen > 0 && summary.id !== openId) {
          const badge = make("span", "badge", unseen);
          badge.dataset.testid = "room-badge";
          badge.title = "new since you last looked";
          button.append(badge);
        }
        button.addEventListener("click", () => openRoom(summary.id));
        block.append(button);
      }
      nodes.push(block);
    }
    if (!nodes.length) nodes.push(make("p", "empty-list", "No rooms yet: start one above."));
    list.replaceChildren(...nodes);
  }

  /** Applies absolute counts from a per-user event to the listing of that room. */
  function applyCounts(payload) {
    const listing = state.listings.get(payload.roomId);
    if (!listing) { refreshListsSoon(); return; }
    if (typeof payload.elementCount === "number") listing.elementCount = payload.elementCount;
    if (typeof payload.unseenCount === "number") listing.badges.elements = payload.unseenCount;
    for (const person of state.people) {
      for (const summary of person.rooms) {
        if (summary.id === payload.roomId && typeof payload.elementCount === "number") summary.elementCount = payload.elementCount;
      }
    }
    renderPeople();
  }

  // ---------------------------------------------------------------------------------------------
  // A new room with someone, by username or user id

  async function findUser(text) {
    const wanted = text.replace(/^@/, "").toLowerCase();
    for (const person of state.people) {
      if (person.id === text || person.username.toLowerCase() === wanted) return person;
    }
    let cursor = null;
    for (let page = 0; page < 50; page++) {
      const query = "/api/users/without-rooms?limit=100" + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
      const json = await api("GET", query);
      const match = json.data.find((user) => user.id === text || user.username.toLowerCase() === wanted);
      if (match) return match;
      cursor = json.nextCursor;
      if (!cursor) break;
    }
    return null;
  }

  async function createRoom(event) {
    event.preventDefault();
    showError("new-room-error", null);
    const withText = $("new-room-with").value.trim();
    const name = $("new-room-name").value.trim();
    try {
      const user = await findUser(withText);
      // An id of someone not listed (a group partner, say) is still worth a try.
      const otherUserId = user ? user.id : withText;
      const body = { otherUserId };
      if (name) body.name = name;
      const json = await api("POST", "/api/rooms", body);
      $("new-room-with").value = "";
      $("new-room-name").value = "";
      await refreshLists();
      openRoom(json.data.id);
    } catch (error) {
      showError("new-room-error", error.code === "not_found" || error.code === "invalid_payload" ? new Error(`No user '${withText}'`) : error);
    }
  }

  async function loadSuggestions() {
    try {
      const json = await api("GET", "/api/users/without-rooms?limit=50");
      $("people-suggestions").replaceChildren(...json.data.map((user) => {
        const option = make("option");
        option.value = user.username;
        option.label = userLabel(user);
        return option;
      }));
    } catch (_) { /* suggestions are a convenience */ }
  }

  // ---------------------------------------------------------------------------------------------
  // One open room: its canvas, live

  async function openRoom(roomId) {
    if (state.room && state.room.id !== roomId && state.socket && state.socket.connected) {
      state.socket.emit("room:leave", { roomId: state.room.id }).catch(() => {});
    }
    state.room = { id: roomId, room: null, elements: new Map(), offset: null, presence: new Set(), origin: { x: 0, y: 0 } };
    // The open room is in the address, so a reload or a shared link opens it again.
    history.replaceState(null, "", `#room=${encodeURIComponent(roomId)}`);
    state.selected = null;
    delete $("room-view").dataset.joined;
    $("no-room").hidden = true;
    $("room-inner").hidden = false;
    $("canvas").replaceChildren();
    showError("room-error", null);
    renderSelection();
    renderPeople();
    try {
      const json = await api("GET", `/api/rooms/${encodeURIComponent(roomId)}`);
      if (!state.room || state.room.id !== roomId) return;
      state.room.room = json.data;
      renderRoomHead();
    } catch (error) {
      showError("room-error", error);
      return;
    }
    if (state.socket && state.socket.connected) joinRoom();
  }

  /** Joins the open room: the server answers with `elements:batch`, or replays what we missed. */
  async function joinRoom() {
    const room = state.room;
    if (!room) return;
    const payload = { roomId: room.id };
    if (room.offset) payload.since = room.offset;
    try {
      const ack = await state.socket.emit("room:join", payload);
      if (ack && ack.error) { showError("room-error", ack.error); return; }
      // Tells watchers (and tests) that live events for this room now arrive.
      if (state.room === room) $("room-view").dataset.joined = room.id;
    } catch (error) {
      showError("room-error", error);
    }
  }

  function onSocketConnect() {
    joinRoom();
    refreshLists();
    refreshUnread();
  }

  function renderRoomHead() {
    const room = state.room && state.room.room;
    if (!room) return;
    $("room-title").textContent = roomLabel(room);
    $("room-people").replaceChildren(...room.participants.map((user) => {
      const present = state.room.presence.has(user.id);
      const chip = make("span", "chip" + (present ? " present" : ""), userLabel(user));
      chip.dataset.userId = user.id;
      chip.title = `@${user.username}${present ? " · has the room open" : ""}`;
      return chip;
    }));
    const count = state.room.elements.size;
    $("room-count").textContent = `${count} ${count === 1 ? "element" : "elements"}`;
  }

  function onSocketEvent(name, data) {
    if (!data || typeof data !== "object") return;
    const room = state.room;
    const inRoom = room && data.roomId === room.id;
    if (inRoom && data.offset) room.offset = data.offset;
    switch (name) {
      case "elements:batch":
        if (!inRoom) break;
        room.elements = new Map(data.elements.map((element) => [element.id, element]));
        room.origin = { x: 0, y: 0 };
        $("canvas").replaceChildren();
        for (const element of data.elements) drawElement(element, false);
        afterChange();
        break;
      case "element:created":
        if (inRoom) { room.elements.set(data.element.id, data.element); drawElement(data.element, true); afterChange(); }
        break;
      case "element:transformed":
        if (inRoom) { room.elements.set(data.element.id, { ...room.elements.get(data.element.id), ...data.element }); drawElement(room.elements.get(data.element.id)); afterChange(); }
        break;
      case "element:updated":
        if (inRoom) patchElement(data.elementId, data.updates || {});
        break;
      case "element:z-index-changed":
        if (inRoom) patchElement(data.elementId, { zIndex: data.zIndex });
        break;
      case "element:deleted":
        if (inRoom) {
          room.elements.delete(data.elementId);
          const node = elementNode(data.elementId);
          if (node) node.remove();
          if (state.selected === data.elementId) state.selected = null;
          afterChange();
        }
        break;
      case "room:cleared":
        if (inRoom) { room.elements.clear(); $("canvas").replaceChildren(); state.selected = null; afterChange(); }
        break;
      case "element:reaction:added":
      case "element:reaction:removed":
        if (inRoom && data.stats) {
          patchElement(data.elementId, {
            reactions: data.stats.totalReactions > 0
              ? { count: data.stats.totalReactions, hasReacted: data.stats.hasReacted, topReactors: data.stats.topReactors || [] }
              : null,
          });
        }
        break;
      case "room:presence":
        if (inRoom) { room.presence = new Set(data.activeUserIds || []); renderRoomHead(); }
        { const listing = state.listings.get(data.roomId); if (listing) { listing.isActive = !!data.isActive; renderPeople(); } }
        break;
      case "element:created:global":
      case "element:deleted:global":
      case "room:cleared:global":
        applyCounts(data);
        break;
      case "room:seen": {
        const listing = state.listings.get(data.roomId);
        if (listing) { listing.badges.elements = data.unseenCount || 0; listing.badges.messages = 0; renderPeople(); }
        break;
      }
      case "room:created":
        refreshListsSoon(); // its notification says who started it
        break;
      case "room:updated":
        refreshListsSoon();
        if (inRoom || (room && data.room && data.room.id === room.id)) { room.room = data.room; renderRoomHead(); }
        break;
      case "notification:new":
        setUnread(data.unreadCount);
        if (data.notification) toast(data.notification.title || "New notification");
        break;
      case "badge:updated":
        setUnread(data.unreadCount);
        break;
      case "error":
        showError("room-error", new Error(`${data.event || "socket"}: ${data.message || data.code}`));
        break;
      default:
        break;
    }
  }

  function patchElement(elementId, updates) {
    const element = state.room.elements.get(elementId);
    if (!element) return;
    const dragging = state.drag && state.drag.id === elementId && state.drag.moved;
    const next = { ...element, ...updates };
    if (dragging) { // our own drag wins over echoes of it; the stacking still follows the server
      next.positionX = element.positionX;
      next.positionY = element.positionY;
    }
    state.room.elements.set(elementId, next);
    drawElement(next);
    renderSelection();
  }

  function afterChange() {
    renderRoomHead();
    renderSelection();
    fitCanvas();
  }

  function elementNode(id) {
    return document.getElementById(`element-${id}`);
  }

  /** What each element node shows, to skip rebuilding unchanged content. */
  const drawnContent = new WeakMap();

  /** Creates or updates the node of one element. */
  function drawElement(element, fresh) {
    let node = elementNode(element.id);
    if (!node) {
      node = make("div");
      node.id = `element-${element.id}`;
      node.dataset.testid = "element";
      node.dataset.elementId = element.id;
      node.addEventListener("pointerdown", (event) => startDrag(event, element.id));
      node.addEventListener("dblclick", () => editNote(element.id));
      if (fresh) node.classList.add("fresh");
      $("canvas").append(node);
    }
    node.className = `element type-${element.type}` + (fresh ? " fresh" : "")
      + (state.selected === element.id ? " selected" : "")
      + (state.drag && state.drag.id === element.id && state.drag.moved ? " dragging" : "");
    node.dataset.type = element.type;
    node.dataset.z = String(element.zIndex);
    node.dataset.x = String(element.positionX);
    node.dataset.y = String(element.positionY);
    const origin = state.room.origin;
    node.style.left = `${element.positionX - origin.x}px`;
    node.style.top = `${element.positionY - origin.y}px`;
    node.style.width = `${element.width}px`;
    node.style.height = `${element.height}px`;
    node.style.zIndex = String(Math.max(0, Math.min(2147483000, element.zIndex)));
    node.style.transform = `rotate(${element.rotation || 0}rad) scale(${element.scaleX || 1}, ${element.scaleY || 1})`;
    if (element.type === "note") node.style.background = noteColor(element.createdBy);
    // The content is rebuilt only when it changed, not on every step of a drag.
    const content = JSON.stringify([element.type, element.content, element.stickerText, element.imageUrl,
      element.thumbnailUrl, element.duration, element.reactions, element.creator && userLabel(element.creator)]);
    if (drawnContent.get(node) !== content && state.editing !== element.id) {
      drawnContent.set(node, content);
      node.replaceChildren(elementBody(element), elementFoot(element));
    }
    maybeGrowOrigin(element);
  }

  function elementBody(element) {
    const body = make("div", "element-body");
    body.dataset.testid = "element-body";
    switch (element.type) {
      case "note":
        body.textContent = element.content || "";
        break;
      case "sticker":
        body.textContent = element.stickerText || element.content || "★";
        break;
      case "photo":
      case "video": {
        const url = element.type === "photo" ? element.imageUrl : (element.thumbnailUrl || element.imageUrl);
        if (url && /^https?:\/\//i.test(url)) {
          const image = make("img");
          image.alt = element.type;
          image.referrerPolicy = "no-referrer";
          image.src = url;
          body.append(image);
        } else {
          body.textContent = element.type === "photo" ? "Photo" : "▶ Video";
        }
        break;
      }
      case "audio": {
        const seconds = Math.round(element.duration || 0);
        body.textContent = `♪ Audio${seconds ? ` · ${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}` : ""}`;
        break;
      }
      default:
        body.textContent = element.type;
    }
    return body;
  }

  function elementFoot(element) {
    const foot = make("div", "element-foot");
    foot.append(make("span", "who", userLabel(element.creator)));
    const reactions = element.reactions;
    const heart = make("button", "heart");
    heart.type = "button";
    heart.dataset.testid = "heart";
    heart.setAttribute("aria-pressed", reactions && reactions.hasReacted ? "true" : "false");
    heart.title = reactions && reactions.topReactors && reactions.topReactors.length
      ? "Hearted by " + reactions.topReactors.map(userLabel).join(", ")
      : "Heart it";
    heart.append(make("span", "glyph", reactions && reactions.hasReacted ? "♥" : "♡"));
    const count = make("span", "heart-count", reactions ? reactions.count : 0);
    count.dataset.testid = "heart-count";
    heart.append(count);
    heart.addEventListener("pointerdown", (event) => event.stopPropagation());
    heart.addEventListener("click", (event) => { event.stopPropagation(); toggleHeart(element.id); });
    foot.append(heart);
    return foot;
  }

  /** Keeps elements at negative positions visible: the canvas origin moves left or up, never back. */
  function maybeGrowOrigin(element) {
    const origin = state.room.origin;
    const x = Math.min(origin.x, Math.floor(element.positionX / 100) * 100 - 20);
    const y = Math.min(origin.y, Math.floor(element.positionY / 100) * 100 - 20);
    if (x < origin.x || y < origin.y) {
      state.room.origin = { x: Math.min(0, x), y: Math.min(0, y) };
      if (state.room.origin.x !== origin.x || state.room.origin.y !== origin.y) {
        for (const other of state.room.elements.values()) if (other.id !== element.id) drawElement(other);
      }
    }
  }

  /** Sizes the canvas to hold every element, with room to spare. */
  function fitCanvas() {
    let width = 0;
    let height = 0;
    const origin = state.room.origin;
    for (const element of state.room.elements.values()) {
      width = Math.max(width, element.positionX - origin.x + element.width * (element.scaleX || 1));
      height = Math.max(height, element.positionY - origin.y + element.height * (element.scaleY || 1));
    }
    $("canvas").style.width = `${Math.ceil(width + 40)}px`;
    $("canvas").style.height = `${Math.ceil(height + 40)}px`;
  }

  // ---------------------------------------------------------------------------------------------
  // Acting on the canvas: every change goes through the socket like any other client's

  async function send(name, payload) {
    try {
      const ack = await state.socket.emit(name, payload);
      if (ack && ack.error) throw new Error(ack.error.message || ack.error.code);
      showError("room-error", null);
      return ack && ack.data;
    } catch (error) {
      showError("room-error", new Error(`${name}: ${error.message}`));
      return null;
    }
  }

  async function addNote(event) {
    event.preventDefault();
    const room = state.room;
    if (!room) return;
    const text = $("note-text").value.trim() || "New note";
    const viewport = $("viewport");
    const jitter = () => Math.round(Math.random() * 60 - 30);
    const element = {
      type: "note",
      positionX: Math.round(room.origin.x + viewport.scrollLeft + Math.max(20, viewport.clientWidth / 2 - 110) + jitter()),
      positionY: Math.round(room.origin.y + viewport.scrollTop + Math.max(20, viewport.clientHeight / 2 - 80) + jitter()),
      width: 220,
      height: 150,
      content: text,
    };
    const data = await send("element:create", { roomId: room.id, element, requestId: `console-${Date.now()}-${Math.random().toString(36).slice(2, 10)}` });
    if (data && data.element) {
      $("note-text").value = "";
      select(data.element.id);
    }
  }

  /** Edits a note's text in place: Enter (or leaving it) saves, Escape cancels. */
  function editNote(id) {
    const element = state.room && state.room.elements.get(id);
    const node = elementNode(id);
    if (!element || element.type !== "note" || !node || state.editing) return;
    const body = node.querySelector(".element-body");
    state.editing = id;
    body.contentEditable = "plaintext-only";
    body.focus();
    document.getSelection().selectAllChildren(body);
    let cancelled = false;
    const finish = () => {
      body.removeEventListener("blur", finish);
      body.removeEventListener("keydown", keys);
      body.contentEditable = "false";
      state.editing = null;
      const current = state.room && state.room.elements.get(id);
      if (!current) return;
      const text = body.textContent;
      if (!cancelled && text !== (current.content || "")) {
        send("element:update", { roomId: state.room.id, elementId: id, updates: { content: text } });
      }
      drawnContent.delete(node);
      drawElement(current);
    };
    const keys = (event) => {
      if (event.key === "Escape") { cancelled = true; body.blur(); }
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); body.blur(); }
    };
    body.addEventListener("blur", finish);
    body.addEventListener("keydown", keys);
  }

  function startDrag(event, id) {
    if (event.button !== 0 || !state.room || state.editing === id) return;
    const element = state.room.elements.get(id);
    if (!element) return;
    event.preventDefault();
    select(id);
    const node = elementNode(id);
    node.setPointerCapture(event.pointerId);
    state.drag = {
      id, pointerId: event.pointerId, startX: event.clientX, startY: event.clientY,
      fromX: element.positionX, fromY: element.positionY, moved: false, lastSent: 0, timer: null,
    };
    const move = (moveEvent) => {
      const drag = state.drag;
      if (!drag || moveEvent.pointerId !== drag.pointerId) return;
      const dx = moveEvent.clientX - drag.startX;
      const dy = moveEvent.clientY - drag.startY;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 3) return;
      drag.moved = true;
      const current = state.room.elements.get(id);
      if (!current) return;
      current.positionX = Math.round(drag.fromX + dx);
      current.positionY = Math.round(drag.fromY + dy);
      drawElement(current);
      sendMoveSoon();
    };
    const end = (endEvent) => {
      const drag = state.drag;
      if (!drag || endEvent.pointerId !== drag.pointerId) return;
      node.removeEventListener("pointermove", move);
      node.removeEventListener("pointerup", end);
      node.removeEventListener("pointercancel", end);
      clearTimeout(drag.timer);
      if (drag.moved) sendMove(drag);
      state.drag = null;
      const current = state.room && state.room.elements.get(id);
      if (current) drawElement(current);
      fitCanvas();
    };
    node.addEventListener("pointermove", move);
    node.addEventListener("pointerup", end);
    node.addEventListener("pointercancel", end);
  }

  /** Sends the dragged position at most every DRAG_SEND_INTERVAL_MS, so others see the move live. */
  function sendMoveSoon() {
    const drag = state.drag;
    if (!drag || drag.timer) return;
    const wait = Math.max(0, drag.lastSent + DRAG_SEND_INTERVAL_MS - Date.now());
    drag.timer = setTimeout(() => { drag.timer = null; if (state.drag === drag) sendMove(drag); }, wait);
  }

  function sendMove(drag) {
    const element = state.room && state.room.elements.get(drag.id);
    if (!element) return;
    if (element.positionX === drag.sentX && element.positionY === drag.sentY) return;
    drag.lastSent = Date.now();
    drag.sentX = element.positionX;
    drag.sentY = element.positionY;
    send("element:update", {
      roomId: state.room.id, elementId: drag.id, updates: { positionX: element.positionX, positionY: element.positionY },
    });
  }

  function select(id) {
    const previous = state.selected;
    state.selected = id;
    for (const changed of [previous, id]) {
      const node = changed && elementNode(changed);
      if (node) node.classList.toggle("selected", changed === id);
    }
    renderSelection();
  }

  function renderSelection() {
    const element = state.room && state.selected ? state.room.elements.get(state.selected) : null;
    $("selection-label").textContent = element
      ? `${element.type[0].toUpperCase()}${element.type.slice(1)} by ${userLabel(element.creator)} · z ${element.zIndex}`
        + (element.type === "note" ? " · double-click to edit" : "")
      : "Nothing selected";
    for (const id of ["bring-to-front", "heart-selected", "delete-selected"]) $(id).disabled = !element;
    if (element) {
      const hearted = element.reactions && element.reactions.hasReacted;
      $("heart-selected").textContent = hearted ? "♥ Unheart" : "♡ Heart";
    }
  }

  function toggleHeart(id) {
    if (!state.room) return;
    send("element:reaction:toggle", { roomId: state.room.id, elementId: id, requestId: `console-${Date.now()}-${Math.random().toString(36).slice(2, 10)}` });
  }

  // ---------------------------------------------------------------------------------------------
  // Wiring

  function init() {
    $("sign-in-form").addEventListener("submit", (event) => { event.preventDefault(); signIn("login"); });
    $("register").addEventListener("click", () => {
      if ($("sign-in-form").reportValidity()) signIn("register");
    });
    $("sign-out").addEventListener("click", () => signOut());
    $("new-room-form").addEventListener("submit", createRoom);
    $("new-room-with").addEventListener("focus", loadSuggestions);
    $("note-form").addEventListener("submit", addNote);
    $("bring-to-front").addEventListener("click", () => {
      if (state.room && state.selected) send("element:bring-to-front", { roomId: state.room.id, elementId: state.selected });
    });
    $("heart-selected").addEventListener("click", () => { if (state.selected) toggleHeart(state.selected); });
    $("delete-selected").addEventListener("click", () => {
      if (state.room && state.selected) send("element:delete", { roomId: state.room.id, elementId: state.selected });
    });
    $("canvas").addEventListener("pointerdown", (event) => { if (event.target === $("canvas")) select(null); });
    // Counts are absolute: coming back to the tab simply reads them again.
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && state.session) { refreshLists(); refreshUnread(); }
    });

    const saved = sessionStorage.getItem(SESSION_KEY);
    if (saved) {
      try { startSession(JSON.parse(saved)); return; } catch (_) { sessionStorage.removeItem(SESSION_KEY); }
    }
    $("sign-in-view").hidden = false;
  }

  init();
})();
