/// Marks element identifiers.
public enum ElementKind {}
/// An element's id.
public typealias ElementID = Identifier<ElementKind>

/// Something placed on a room's canvas: a note, photo, audio clip, video or sticker.
public struct Element: Hashable, Sendable, Codable {
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

    private enum CodingKeys: String, CodingKey {
        case id, roomId, type, positionX, positionY, width, height, rotation, scaleX, scaleY, content, imageUrl, audioUrl
        case videoUrl, thumbnailUrl, duration, stickerText, zIndex, createdBy, createdAt, creator, reactions
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(roomId, forKey: .roomId)
        try container.encode(type, forKey: .type)
        try container.encode(positionX, forKey: .positionX)
        try container.encode(positionY, forKey: .positionY)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(rotation, forKey: .rotation)
        try container.encode(scaleX, forKey: .scaleX)
        try container.encode(scaleY, forKey: .scaleY)
        try container.encodeIfPresent(content, forKey: .content)
        try container.encodeIfPresent(imageUrl, forKey: .imageUrl)
        try container.encodeIfPresent(audioUrl, forKey: .audioUrl)
        try container.encodeIfPresent(videoUrl, forKey: .videoUrl)
        try container.encodeIfPresent(thumbnailUrl, forKey: .thumbnailUrl)
        try container.encodeIfPresent(duration, forKey: .duration)
        try container.encodeIfPresent(stickerText, forKey: .stickerText)
        try container.encode(zIndex, forKey: .zIndex)
        try container.encode(createdBy, forKey: .createdBy)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(creator, forKey: .creator)
        // Always present: clients tell "no reactions yet" by an explicit null.
        try container.encode(reactions, forKey: .reactions)
    }
}

/// An element's hearts as one viewer sees them.
public struct ElementReactions: Hashable, Sendable, Codable {
    public var count: Int
    public var hasReacted: Bool
    /// `heart` when the viewer has reacted, else `null` (always present, as seed 001 shows it).
    public var userReaction: String?
    /// The three most recent reactors.
    public var topReactors: [User]

    private enum CodingKeys: String, CodingKey { case count, hasReacted, userReaction, topReactors }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(hasReacted, forKey: .hasReacted)
        try container.encode(userReaction, forKey: .userReaction)
        try container.encode(topReactors, forKey: .topReactors)
    }
}
