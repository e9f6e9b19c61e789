import APNs
import FCM
import Foundation
import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import NIOHTTP1
import RedisClient
import RoomcastCore
import ServiceLifecycle
import SocketIOServer
import UnixSignals
import WebSocketServer

/// One gateway node: the HTTP and WebSocket server and the services it needs, run as one
/// service group that drains on SIGTERM or SIGINT.
public struct Gateway: Sendable {
    /// The validated settings.
    public let settings: GatewaySettings
    private let logger: Logger
    /// Registers socket events beyond the contract's on the node's router: a seam for tests that
    /// add an event the way a contributor would (`ThrowawayEventTests`); nothing in production
    /// sets it.
    var registerExtraSocketEvents: @Sendable (inout SocketEventRouter) -> Void = { _ in }

    /// Creates a node from settings.
    public init(settings: GatewaySettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// Runs until a shutdown signal, then stops the server before the Redis services.
    /// - Parameter onReady: called once with the ready line when the server accepts connections.
    public func run(onReady: @escaping @Sendable (String) -> Void = { _ in }) async throws {
        try settings.validateForServing()
        guard let secret = settings.jwtSecret else { return }
        let node = try assemble(secret: secret)
        let (redis, heartbeat, sockets) = (node.redis, node.heartbeat, node.sockets)
        let engineIO = sockets.engine
        let redisEndpoint = settings.redis.endpoint
        // The socket endpoint runs on a plain NIO WebSocket pipeline (WebSocketServerChannel),
        // shared with the Autobahn conformance echo; every other request goes to the router.
        let limits = WebSocketLimits(
            maxMessageSize: settings.socket.maxPayload, maxQueuedBytes: settings.socket.outboundQueueBytes, compression: settings.socket.compression
        )
        // Polls and upgrades of sessions held by other nodes go there: no sticky sessions needed.
        let nodeAddresses = NodeAddressBook(registry: NodeRegistry(redis: redis))
        let forwarding = SessionForwarding(
            nodeID: heartbeat.nodeID,
            maxBodySize: settings.socket.maxPayload,
            owner: { head in
                let request = EngineIORequest(target: head.uri)
                guard engineIO.serves(request), let sid = request.sid else { return nil }
                return EngineIOSessionID.node(of: sid)
            },
            locate: { await nodeAddresses.address(of: $0) }
        )
        let socketServer = WebSocketServerChannel.builder(
            limits: limits, interceptor: { ForwardingHandler(forwarding: forwarding) }, idleTimeout: .init(settings.httpIdleTimeout),
            connectionsPerAddress: node.connectionsPerAddress
        ) { head in
            // Anything else falls through to the router, which explains the refusal.
            engineIO.webSocketRoute(head)
        }
        var app = Application(
            router: node.router,
            server: socketServer,
            configuration: .init(
                address: .hostname(settings.host, port: settings.port), serverName: "roomcast", backlog: settings.listenBacklog
            ),
            onServerRunning: { channel in
                let address = channel.localAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
                onReady("roomcast ready on http://\(address) (redis \(redisEndpoint))")
                heartbeat.serverStarted(advertising: settings.advertiseURL(port: channel.localAddress?.port ?? settings.port))
            },
            logger: logger
        )
        // Services added here start before the server and stop after it, so in-flight requests
        // can still reach Redis while the server drains.
        app.addServices(redis, FunctionLibraryLoader(redis: redis, logger: logger.with(label: "redis")), node.hub, node.presence, heartbeat)
        for worker in node.pushWorkers {
            app.addServices(worker)
        }
        if settings.notifications.apns == nil {
            logger.notice("APNs delivery is off (no apns settings): ios push jobs wait in \(RedisKeys.pushOutbox(for: PushToken.ios))")
        }
        if settings.notifications.fcm == nil {
            logger.notice("FCM delivery is off (no fcm settings): fcm push jobs wait in \(RedisKeys.pushOutbox(for: PushToken.fcm))")
        }
        // SIGTERM drains: the server stops accepting, sockets are told to reconnect elsewhere (1001)
        // while mutations under way finish; past the drain timeout what is left is cancelled.
        // After the server, so it is told first (shutdown runs in reverse): polling clients are
        // sent away before the server waits for their pending polls.
        let watchdog = ShutdownWatchdog(limit: settings.drainTimeout + Self.shutdownMargin, logger: logger)
        var group = ServiceGroupConfiguration(services: [app, sockets, watchdog], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = settings.drainTimeout
        try await ServiceGroup(configuration: group).run()
    }

    /// A node's parts, built but not started: ``run(onReady:)`` serves and starts them; tests
    /// read the router's routes (`OpenAPIDocumentTests`).
    struct Assembly {
        let redis: any RedisClientProtocol
        /// Every HTTP route but the WebSocket upgrade, with its middleware.
        let router: Router<RoomcastRequestContext>
        let hub: SocketHub
        let presence: PresenceKeeper
        let heartbeat: NodeHeartbeat
        let pushWorkers: [PushWorker]
        /// Socket.IO at `/socket.io/`, the gateway its application.
        let sockets: SocketServer
        /// `http.max_connections_per_address`, the sibling nodes exempt.
        let connectionsPerAddress: ConnectionsPerAddress
    }

    /// Builds the node's stores, services and router; nothing connects or listens until they run.
    /// - Throws: ``ConfigurationError`` for unreadable push settings.
    func assemble(secret: String) throws -> Assembly {
        var redisConfiguration = try settings.redisClientConfiguration()
        redisConfiguration.clientName = redisConfiguration.clientName ?? "roomcast-gateway"
        // The Redis client's metrics in the server's namespace, as every other metric.
        redisConfiguration.metricsPrefix = "roomcast_"
        let redis = redisConfiguration.makeClient(logger: logger.with(label: "redis"))
        let eventLog = RoomEventLog(redis: redis, maximumReplay: settings.roomStreamLength)
        let nodeID = NodeID.random()
        let hub = SocketHub(
            node: nodeID, redis: redisConfiguration, eventLog: eventLog, userEventLog: UserEventLog(redis: redis), gapReadTimeout: settings.gapReadTimeout,
            flushDelay: settings.socket.flushDelay == .zero ? nil : settings.socket.flushDelay, publisher: redis,
            subscriptionTimeout: settings.redis.commandTimeout, logger: logger.with(label: "pubsub")
        )
        let tokens = TokenService(secret: secret, lifetime: settings.tokenLifetime)
        let users = UserStore(redis: redis)
        let rooms = RoomStore(redis: redis)
        var messages = MessageStore(redis: redis)
        messages.eventsKept = settings.roomStreamLength
        messages.maxTextLength = settings.maxMessageLength
        messages.messagesKept = settings.messagesKeptPerRoom
        let elements = ElementStore(
            redis: redis, eventsKept: settings.roomStreamLength, maxElements: settings.maxRoomElements,
            maxContentLength: settings.maxElementContentLength
        )
        let reactions = ReactionStore(redis: redis, eventsKept: settings.roomStreamLength)
        let notifications = NotificationStore(redis: redis, keptPerUser: settings.notifications.keptPerUser)
        let pushTokens = PushTokenStore(redis: redis, maxDevicesPerUser: settings.notifications.push.maxDevicesPerUser)
        let pushWorkers = try makePushWorkers(redis: redis, tokens: pushTokens)
        let presenceStore = PresenceStore(redis: redis, lifetime: settings.presenceBackstop, eventsKept: settings.roomStreamLength)
        let socketStore = UserSocketStore(redis: redis, lifetime: settings.presenceBackstop)
        let presence = PresenceKeeper(
            store: presenceStore, sockets: socketStore, index: NodeIndex(redis: redis, node: nodeID, lifetime: settings.presenceBackstop),
            gaps: hub, interval: settings.presenceBackstop / 3,
            logger: logger.with(label: "presence")
        )
        let connectionsPerAddress = ConnectionsPerAddress(
            limit: settings.maxConnectionsPerAddress,
            source: settings.requestLimits.trustForwardedFor
                ? .firstRequest({ head in RequestLimits.forwardedClient(head.headers["X-Forwarded-For"].last) }) : .peer
        )
        let heartbeat = NodeHeartbeat(
            nodeID: nodeID, registry: NodeRegistry(redis: redis), ttl: settings.nodeTTL,
            sockets: { presence.connectedSockets },
            onLiveNodes: { nodes in
                // Their forwarded connections each stand for a client counted where it connected.
                connectionsPerAddress.exempt(Set(nodes.compactMap { NodeAddressBook.socketAddress($0.address)?.ipAddress }))
            },
            presence: presence,
            reaper: NodeReaper(redis: redis, presence: presenceStore, sockets: socketStore, claimLease: settings.nodeTTL),
            logger: logger.with(label: "node")
        )
        // Every change a client asks for, over the socket or REST, with its side effects.
        let changes = RoomChanges(
            rooms: rooms, elements: elements, reactions: reactions, messages: messages, userEvents: UserEvents(redis: redis),
            notifications: notifications, logger: logger.with(label: "notifications")
        )
        var events = SocketEvents.router()
        registerExtraSocketEvents(&events)
        let socketServices = SocketServices(
            nodeID: heartbeat.nodeID,
            settings: settings.socket,
            hub: hub,
            tokens: tokens,
            changes: changes,
            eventLog: eventLog,
            presence: presence,
            previews: CanvasPreviewRelay(redis: redis),
            events: events,
            logger: logger.with(label: "socket")
        )

        let router = Router(context: RoomcastRequestContext.self)
        // Outermost: every answer is counted, the other middleware's included.
        router.add(middleware: HTTPMetricsMiddleware())
        if !settings.corsOrigins.isEmpty {
            // Outermost: error responses and preflights get the headers too.
            router.add(middleware: CORSMiddleware(origins: settings.corsOrigins))
        }
        // First, so the error middleware's 413 names the limit in force.
        router.add(middleware: BodyLimitMiddleware(maxBodySize: settings.maxRequestBodySize))
        router.add(middleware: ErrorMiddleware())
        HealthRoutes(redis: redis).register(on: router)
        MetricsRoutes().register(on: router)
        ConsoleRoutes().register(on: router)
        // Public like the console: a stray or stale token must not keep a client from the contract.
        OpenAPIRoutes(servesInternalNotifications: settings.notifications.serviceKey != nil).register(on: router)
        let sockets = GatewaySocketApplication.makeServer(services: socketServices)
        sockets.engine.registerPolling(on: router)
        // Tokens are checked on the API only: a stray header must not fail a health probe.
        // Services authenticate with their own key, never with a user's token.
        InternalNotificationRoutes(notifications: notifications, users: users, serviceKey: settings.notifications.serviceKey).register(on: router)
        let requestLimits = RequestLimits(limiter: RateLimiter(redis: redis), settings: settings.requestLimits)
        let api = router.group().add(middleware: AuthMiddleware(tokens: tokens)).add(middleware: MutationLimitMiddleware(limits: requestLimits))
        AuthRoutes(users: users, tokens: tokens, passwords: PasswordHasher(cost: settings.bcryptCost), limits: requestLimits).register(on: api)
        RoomRoutes(changes: changes, maxParticipants: settings.maxRoomParticipants).register(on: api)
        UserRoutes(users: users, rooms: rooms).register(on: api)
        MessageRoutes(messages: messages).register(on: api)
        PushTokenRoutes(tokens: pushTokens).register(on: api)
        ElementRoutes(changes: changes, users: users).register(on: api)
        NotificationRoutes(notifications: notifications).register(on: api)
        // Last, so it wraps only the not-found responder (see the middleware).
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))

        return Assembly(
            redis: redis, router: router, hub: hub, presence: presence, heartbeat: heartbeat, pushWorkers: pushWorkers,
            sockets: sockets, connectionsPerAddress: connectionsPerAddress
        )
    }

    /// What a shutdown may take beyond the drain timeout (the services stopped after the server)
    /// before the watchdog ends the process.
    static let shutdownMargin: Duration = .seconds(15)

    /// A push worker per platform whose service is configured; a platform without one leaves its
    /// jobs in its outbox.
    /// - Throws: ``ConfigurationError`` for an unreadable key or a bad endpoint.
    private func makePushWorkers(redis: any RedisClientProtocol, tokens: PushTokenStore) throws(ConfigurationError) -> [PushWorker] {
        let senders = [try makeAPNsSender(), try makeFCMSender()].compactMap { $0 }
        return senders.map { platform, sender, requestTimeout in
            PushWorker(
                outbox: PushOutbox(redis: redis, platform: platform), tokens: tokens, sender: sender, settings: settings.notifications.push,
                requestTimeout: requestTimeout, consumer: "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)",
                logger: logger.with(label: "push")
            )
        }
    }

    private func makeAPNsSender() throws(ConfigurationError) -> (String, any PushSender, Duration)? {
        guard let apns = settings.notifications.apns else { return nil }
        let endpoint: APNsEndpoint
        let key: APNsSigningKey
        do {
            switch apns.endpoint {
            case "production": endpoint = .production
            case "sandbox": endpoint = .sandbox
            default: endpoint = try APNsEndpoint(url: apns.endpoint)
            }
        } catch {
            throw ConfigurationError(key: "apns.endpoint", reason: "\(error)")
        }
        do {
            key = try APNsSigningKey(contentsOfFile: apns.keyPath)
        } catch {
            throw ConfigurationError(key: "apns.key_path", reason: "\(error)")
        }
        let client = APNsClient(
            configuration: APNsConfiguration(
                endpoint: endpoint, topic: apns.topic, teamID: apns.teamID, keyID: apns.keyID, signingKey: key,
                requestTimeout: apns.requestTimeout
            ),
            logger: logger.with(label: "apns")
        )
        return (PushToken.ios, APNsPushSender(client: client), apns.requestTimeout)
    }

    private func makeFCMSender() throws(ConfigurationError) -> (String, any PushSender, Duration)? {
        guard let fcm = settings.notifications.fcm else { return nil }
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(contentsOfFile: fcm.serviceAccountPath)
        } catch {
            throw ConfigurationError(key: "fcm.service_account_path", reason: "\(error)")
        }
        // Each URL on its own, so the error names the setting that holds the bad one.
        do {
            _ = try FCMConfiguration(serviceAccount: account, endpointURL: fcm.endpoint, tokenURI: FCMConfiguration.productionURL)
        } catch {
            throw ConfigurationError(key: "fcm.endpoint", reason: "\(error)")
        }
        let configuration: FCMConfiguration
        do {
            configuration = try FCMConfiguration(
                serviceAccount: account, endpointURL: fcm.endpoint, tokenURI: fcm.tokenURI, requestTimeout: fcm.requestTimeout
            )
        } catch {
            // Without fcm.token_uri, the key file's token_uri is the bad one.
            throw ConfigurationError(key: fcm.tokenURI == nil ? "fcm.service_account_path" : "fcm.token_uri", reason: "\(error)")
        }
        let client = FCMClient(configuration: configuration, logger: logger.with(label: "fcm"))
        return (PushToken.fcm, FCMPushSender(client: client), fcm.requestTimeout)
    }
}

extension Logger {
    /// A copy with another label and the same level.
    func with(label: String) -> Logger {
        var copy = Logger(label: label)
        copy.logLevel = logLevel
        return copy
    }
}
