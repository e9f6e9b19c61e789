import Foundation
import RoomcastTestSupport
import Testing

/// `notification:new` and `badge:updated` on every socket of a user, whichever node it is on, and
/// the notifications Roomcast raises itself (hearts, new rooms): docs/clients/push.md.
@Suite("Notifications in realtime: badges on every socket, hearts and new rooms", .serialized)
struct NotificationRealtimeTests {
    static func event(_ socket: SocketIOTestClient, _ name: String) async throws -> JSONValue {
        try JSONValue(try await socket.nextEvent(name, timeout: .seconds(30)))
    }

    /// The names of the notification events `socket` received so far, in order.
    static func notificationEventNames(_ socket: SocketIOTestClient) async -> [String] {
        await socket.allEvents().map(\.name).filter { $0 == "notification:new" || $0 == "badge:updated" }
    }

    /// Waits for `notification:new` then `badge:updated` on `socket` and checks both.
    @discardableResult
    static func expectNew(
        _ socket: SocketIOTestClient, unreadCount: Int, notification expected: JSONValue? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let new = try await event(socket, "notification:new")
        #expect(new.memberNames == ["notification", "unreadCount"], "\(new)", sourceLocation: sourceLocation)
        #expect(new["unreadCount"].intValue == unreadCount, "\(new)", sourceLocation: sourceLocation)
        #expect(new["notification"]["read"] == false, "\(new)", sourceLocation: sourceLocation)
        if let expected {
            #expect(new["notification"] == expected, sourceLocation: sourceLocation)
        }
        let badge = try await event(socket, "badge:updated")
        #expect(badge == ["unreadCount": .number(Double(unreadCount))], sourceLocation: sourceLocation)
        return new["notification"]
    }

    @Test("read-all and new notifications reach every socket of the user on both nodes, and no one else's")
    func badgeOnEverySocket() async throws {
        try await TwoNodeCluster.with(environment: NotificationAPI.environment) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let alice1 = try await cluster.connect(alice, to: cluster.node1)
            let alice2 = try await cluster.connect(alice, to: cluster.node2)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let sockets = [alice1, alice2]

            // A notification: notification:new {notification, unreadCount} then badge:updated, on both nodes.
            let first = try await NotificationAPI.create(for: alice, title: "First", actor: bob, on: cluster.node1)
            #expect(first.unreadCount == 1)
            for socket in sockets {
                try await Self.expectNew(socket, unreadCount: 1, notification: first.notification)
                #expect(await Self.notificationEventNames(socket) == ["notification:new", "badge:updated"])
            }
            var ids = [try #require(first.notification["id"].stringValue)]
            for count in 2...3 {
                let created = try await NotificationAPI.create(for: alice, title: "Number \(count)", on: count == 2 ? cluster.node2 : cluster.node1)
                #expect(created.unreadCount == count)
                for socket in sockets { try await Self.expectNew(socket, unreadCount: count, notification: created.notification) }
                ids.append(try #require(created.notification["id"].stringValue))
            }

            // Reading one: badge:updated {2} on both; reading it again changes nothing and sends nothing.
            #expect(try await NotificationAPI.read(ids[1], as: alice, on: cluster.node2).json == ["data": ["unreadCount": 2]])
            for socket in sockets { #expect(try await Self.event(socket, "badge:updated") == ["unreadCount": 2]) }
            #expect(try await NotificationAPI.read(ids[1], as: alice, on: cluster.node1).json == ["data": ["unreadCount": 2]])

            // read-all: {unreadCount: 0}, and the next badge:updated on each socket is {0} (none
            // came from the repeated read in between).
            let readAll = try await NotificationAPI.readAll(alice, on: cluster.node1)
            #expect(readAll.status == 200, "\(readAll.json)")
            #expect(readAll.json == ["data": ["unreadCount": 0]])
            for socket in sockets { #expect(try await Self.event(socket, "badge:updated") == ["unreadCount": 0]) }
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node2) == 0)
            let listed = try await NotificationAPI.list(alice, on: cluster.node2).notifications
            #expect(NotificationRouteTests.ids(listed) == ids.reversed())
            #expect(listed.allSatisfy { $0["read"] == true }, "\(listed)")

            // read-all with nothing unread still tells every socket.
            #expect(try await NotificationAPI.readAll(alice, on: cluster.node2).json == ["data": ["unreadCount": 0]])
            for socket in sockets { #expect(try await Self.event(socket, "badge:updated") == ["unreadCount": 0]) }

            // And a new one after that counts from zero.
            let fourth = try await NotificationAPI.create(for: alice, title: "Fourth", on: cluster.node2)
            #expect(fourth.unreadCount == 1)
            for socket in sockets { try await Self.expectNew(socket, unreadCount: 1, notification: fourth.notification) }

            // Each socket got exactly this sequence.
            let expectedNames = ["notification:new", "badge:updated", "notification:new", "badge:updated", "notification:new", "badge:updated"]
                + ["badge:updated", "badge:updated", "badge:updated", "notification:new", "badge:updated"]
            for socket in sockets {
                #expect(await Self.notificationEventNames(socket) == expectedNames)
                let badges = await socket.events(named: "badge:updated").compactMap { try? JSONValue($0)["unreadCount"].intValue }
                #expect(badges == [1, 2, 3, 2, 0, 0, 1])
            }

            // Bob got none of it.
            try await bobSocket.expectNoEvent("badge:updated", within: .milliseconds(300))
            #expect(await Self.notificationEventNames(bobSocket).isEmpty)
            #expect(try await NotificationAPI.unreadCount(bob, on: cluster.node1) == 0)

            // A socket connected later gets nothing old, and the next change like the others.
            let alice3 = try await cluster.connect(alice, to: cluster.node1)
            #expect(try await NotificationAPI.read(try #require(fourth.notification["id"].stringValue), as: alice, on: cluster.node2).json
                == ["data": ["unreadCount": 0]])
            for socket in sockets + [alice3] { #expect(try await Self.event(socket, "badge:updated") == ["unreadCount": 0]) }
            #expect(await Self.notificationEventNames(alice3) == ["badge:updated"])

            // Fenced, so that a slow machine cannot hide a late one: a notification of Bob's own
            // goes through his user channel after anything of Alice's that went there; it is the
            // first he gets.
            _ = try await NotificationAPI.create(for: bob, title: "For Bob", on: cluster.node1)
            try await Self.expectNew(bobSocket, unreadCount: 1)
            #expect(await Self.notificationEventNames(bobSocket) == ["notification:new", "badge:updated"])
        }
    }

    @Test("a heart notifies the element's creator only, once per giver; a new room notifies the other participants")
    func reactionsAndRooms() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let carol = try await cluster.register("carol")
            let alice1 = try await cluster.connect(alice, to: cluster.node1)
            let alice2 = try await cluster.connect(alice, to: cluster.node2)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let carolSocket = try await cluster.connect(carol, to: cluster.node1)

            // Alice creates a room with Bob and Carol: room_created for them, not for her.
            let room = try await cluster.createRoom(by: alice, with: [bob, carol])
            for (socket, user) in [(bobSocket, bob), (carolSocket, carol)] {
                let notification = try await Self.expectNew(socket, unreadCount: 1)
                #expect(notification["type"] == "room_created", "\(notification)")
                #expect(notification["roomId"].stringValue == room)
                #expect(notification["actor"]["id"].stringValue == alice.id)
                #expect(notification["title"].stringValue?.contains("alice") == true, "\(notification)")
                #expect(notification["elementId"] == .null)
                #expect(try await NotificationAPI.list(user, on: cluster.node2).notifications == [notification])
            }
            #expect(try await NotificationAPI.list(alice, on: cluster.node1).notifications.isEmpty)

            // Bob hearts Alice's note: both of Alice's sockets (one not even in the room) hear of it.
            _ = try await LiveRoomTests.join(alice1, room)
            _ = try await LiveRoomTests.join(bobSocket, room)
            let element = try await LiveRoomTests.create(alice1, room)
            #expect(try await LiveRoomTests.toggle(bobSocket, room, element)["action"] == "added")
            var reactionNotification = JSONValue.null
            for socket in [alice1, alice2] {
                reactionNotification = try await Self.expectNew(socket, unreadCount: 1)
            }
            #expect(reactionNotification["type"] == "element_reaction", "\(reactionNotification)")
            #expect(reactionNotification["roomId"].stringValue == room)
            #expect(reactionNotification["elementId"].stringValue == element)
            #expect(reactionNotification["actor"]["id"].stringValue == bob.id)
            #expect(reactionNotification["title"] == "bob hearted your note")
            let reactionID = try #require(reactionNotification["id"].stringValue)
            #expect(try await NotificationAPI.list(alice, on: cluster.node2).notifications == [reactionNotification])

            // Alice hearts her own note, Bob takes his back: neither notifies anyone.
            #expect(try await LiveRoomTests.toggle(alice1, room, element)["action"] == "added")
            #expect(try await LiveRoomTests.toggle(bobSocket, room, element)["action"] == "removed")
            #expect(try await NotificationAPI.list(alice, on: cluster.node1).notifications == [reactionNotification])
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node2) == 1)

            // Alice reads it; Bob hearts again (over REST): the same notification, on top, unread again.
            #expect(try await NotificationAPI.read(reactionID, as: alice, on: cluster.node1).json == ["data": ["unreadCount": 0]])
            for socket in [alice1, alice2] { #expect(try await Self.event(socket, "badge:updated") == ["unreadCount": 0]) }
            let reheart = try await ElementSocketTests.rest(
                "POST", "/api/rooms/\(room)/elements/\(element)/reactions/toggle", as: bob, on: cluster.node1
            )
            #expect(reheart.status == 200, "\(reheart.json)")
            #expect(reheart.json["data"]["action"] == "added")
            for socket in [alice1, alice2] {
                let again = try await Self.expectNew(socket, unreadCount: 1)
                #expect(again["id"].stringValue == reactionID, "\(again)")
                #expect(again["actor"]["id"].stringValue == bob.id)
            }
            let afterReheart = try await NotificationAPI.list(alice, on: cluster.node2).notifications
            #expect(NotificationRouteTests.ids(afterReheart) == [reactionID], "\(afterReheart)")
            #expect(afterReheart.first?["read"] == false)

            // Carol's heart is a notification of its own, on top.
            let carolHeart = try await ElementSocketTests.rest(
                "POST", "/api/rooms/\(room)/elements/\(element)/reactions/toggle", as: carol, on: cluster.node2
            )
            #expect(carolHeart.json["data"]["action"] == "added", "\(carolHeart.json)")
            var fromCarol = JSONValue.null
            for socket in [alice1, alice2] { fromCarol = try await Self.expectNew(socket, unreadCount: 2) }
            #expect(fromCarol["actor"]["id"].stringValue == carol.id)
            #expect(fromCarol["id"].stringValue != reactionID)
            #expect(NotificationRouteTests.ids(try await NotificationAPI.list(alice, on: cluster.node1).notifications)
                == [try #require(fromCarol["id"].stringValue), reactionID])

            // Alice's sockets saw exactly: Bob's heart, its read, Bob's heart again, Carol's heart.
            for socket in [alice1, alice2] {
                let news = await socket.events(named: "notification:new").compactMap { try? JSONValue($0)["notification"]["actor"]["id"].stringValue }
                #expect(news == [bob.id, bob.id, carol.id])
                let badges = await socket.events(named: "badge:updated").compactMap { try? JSONValue($0)["unreadCount"].intValue }
                #expect(badges == [1, 0, 1, 2])
            }
            // Bob and Carol only ever had their room_created.
            for (socket, user) in [(bobSocket, bob), (carolSocket, carol)] {
                #expect(await Self.notificationEventNames(socket) == ["notification:new", "badge:updated"])
                let listed = try await NotificationAPI.list(user, on: cluster.node1).notifications
                #expect(listed.map { $0["type"] } == ["room_created"])
            }
        }
    }
}
