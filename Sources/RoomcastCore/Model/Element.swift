/// Marks element identifiers.
public enum ElementKind {}
/// An element's id.
public typealias ElementID = Identifier<ElementKind>

/// Something placed on a room's canvas: a note, photo, audio clip, video or sticker.
///
/// Decoded only: the Lua functions are the one encoder of elements (`element_json` in `_elements.lua`),
/// and the gateway forwards their JSON as is (``ElementStore/createJSON(_:by:in:requestId:)``, …).
public struct Element: Hashable, Sendable, Decodable {
    public var id: ElementID
    public var roomId: RoomID
    public var type: String
    public var positionX: Double
    public var positionY: Double
    public var width: Double
    public var height: Double
    public var rotation: Double
    public var scaleX: Double
    public var scaleY: Double
    public var content: String?
    public var imageUrl: String?
    public var audioUrl: String?
    public var videoUrl: String?
    public var thumbnailUrl: String?
    public var duration: Double?
    public var stickerText: String?
    /// Position in the room's stack: higher is on top; unique within the room.
    public var zIndex: Int
    public var createdBy: UserID
    public var createdAt: Timestamp
    /// The creator's profile, for display.
    public var creator: User?
    /// `null` until the first reaction.
    public var reactions: ElementReactions?
}

/// An element's hearts as one viewer sees them.
public struct ElementReactions: Hashable, Sendable, Decodable {
    public var count: Int
    public var hasReacted: Bool
    /// `heart` when the viewer has reacted, else `null` (always present, as seed 001 shows it).
    public var userReaction: String?
    /// The three most recent reactors.
    public var topReactors: [User]
}
