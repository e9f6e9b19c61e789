import Hummingbird
import RoomcastCore

/// `GET /api/users/without-rooms`: the people the caller shares no room with, for starting one.
struct UserRoutes {
    let users: UserStore
    let rooms: RoomStore

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.get("/api/users/without-rooms") { request, context in
            let caller = try context.requireUser()
            let page = try PageRequest(request)
            var cursor: UserCursor?
            if let text = page.cursor { cursor = try UserCursor(encoded: text) }
            var excluded = try await rooms.partners(of: caller)
            excluded.insert(caller)
            let users = try await users.page(after: cursor, limit: page.limit, excluding: excluded)
            // With emails, as the app's "+" screen shows them.
            return PagedAPIResponse(users.accounts, nextCursor: users.nextCursor?.encoded)
        }
    }
}
