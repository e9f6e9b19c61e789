import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The REST calls that set a benchmark up: users, rooms, elements.
struct BenchAPI: Sendable {
    let base: String

    struct Session: Sendable {
        let token: String
        let userId: String
    }

    func register(_ username: String) async throws -> Session {
        let json = try await post("/api/auth/register", ["username": username, "password": "benchmark-password"], token: nil)
        guard let data = json["data"] as? [String: Any], let token = data["token"] as? String,
            let user = data["user"] as? [String: Any], let id = user["id"] as? String
        else { throw BenchError("register \(username): \(json)") }
        return Session(token: token, userId: id)
    }

    func createRoom(by owner: Session, with others: [Session]) async throws -> String {
        let json = try await post("/api/rooms", ["participantIds": others.map(\.userId)], token: owner.token)
        guard let data = json["data"] as? [String: Any], let id = data["id"] as? String else { throw BenchError("room: \(json)") }
        return id
    }

    func createElement(in room: String, by owner: Session) async throws -> String {
        let body: [String: Any] = ["type": "note", "positionX": 0, "positionY": 0, "width": 100, "height": 100, "content": "drag me"]
        let json = try await post("/api/rooms/\(room)/elements", body, token: owner.token)
        guard let data = json["data"] as? [String: Any], let id = data["id"] as? String else { throw BenchError("element: \(json)") }
        return id
    }

    private func post(_ path: String, _ body: [String: Any], token: String?) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}
