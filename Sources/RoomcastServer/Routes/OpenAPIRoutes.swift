import Foundation
import Hummingbird
import NIOCore
import RoomcastCore

/// `GET /api/openapi.json`: the REST API's contract as an OpenAPI 3.1 document, public like the
/// console (no token needed; a bad one is not even looked at).
///
/// The document is `Sources/RoomcastServer/OpenAPI/openapi.json`, a resource of this target, read
/// once when the routes are built. A node serves it as it is, except that a node without
/// `notifications.service_key` leaves out `POST /api/internal/notifications`, which answers it
/// 404 like an unknown path: the document says what this node serves. `OpenAPIDocumentTests`
/// checks that it names every route the router has and no other; `scripts/schemathesis.sh`
/// checks the node's answers against it.
struct OpenAPIRoutes {
    /// The request path.
    static let path = "/api/openapi.json"

    /// The document's bytes; `nil` when the resource bundle lacks it (then the route answers 404).
    let document: ByteBuffer?

    /// Reads the document from the resource bundle.
    /// - Parameter servesInternalNotifications: whether the node has a service key (otherwise the
    ///   internal notifications operation is left out).
    init(servesInternalNotifications: Bool) {
        document = Self.served(servesInternalNotifications: servesInternalNotifications).map { ByteBuffer(bytes: $0) }
    }

    /// The document as shipped in the resource bundle.
    static func documentBytes() -> Data? {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json", subdirectory: "OpenAPI") else { return nil }
        return try? Data(contentsOf: url)
    }

    /// The document as a node serves it: as shipped, or without the internal notifications
    /// operation, its tag and its security scheme.
    static func served(servesInternalNotifications: Bool) -> Data? {
        guard let shipped = documentBytes() else { return nil }
        guard !servesInternalNotifications else { return shipped }
        guard var document = try? JSONSerialization.jsonObject(with: shipped) as? [String: Any],
            var paths = document["paths"] as? [String: Any], var components = document["components"] as? [String: Any],
            var schemes = components["securitySchemes"] as? [String: Any]
        else { return shipped }
        paths[InternalNotificationRoutes.path] = nil
        document["paths"] = paths
        schemes[InternalNotificationRoutes.securityScheme] = nil
        components["securitySchemes"] = schemes
        document["components"] = components
        if let tags = document["tags"] as? [[String: Any]] {
            document["tags"] = tags.filter { $0["name"] as? String != InternalNotificationRoutes.tag }
        }
        return try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    func register(on router: Router<some RequestContext>) {
        router.get(RouterPath(Self.path)) { _, _ throws(RoomcastError) in
            guard let document else {
                throw RoomcastError(.notFound, "the OpenAPI document is missing from this node's resource bundle")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"], body: ResponseBody(byteBuffer: document)
            )
        }
    }
}
