import Foundation
@testable import RoomcastServer
import Testing

/// What a client reads of a payload of the wrong shape: the field and the JSON type it needs,
/// never a Swift type name.
@Suite("DecodingError as clients read it")
struct DecodingErrorDescriptionTests {
    struct Inner: Decodable { var x: Double }
    struct Payload: Decodable {
        var element: Inner?
        var list: [Int]?
        var name: String?
        var flag: Bool?
    }

    static func description(_ json: String) -> String? {
        do {
            _ = try JSONDecoder().decode(Payload.self, from: Data(json.utf8))
            return nil
        } catch let error as DecodingError {
            return error.clientDescription
        } catch {
            return "\(error)"
        }
    }

    @Test("each JSON type is named as JSON names it", arguments: [
        (#"{"element":[]}"#, "field 'element' must be an object"),
        (#"{"element":"x"}"#, "field 'element' must be an object"),
        (#"{"list":{}}"#, "field 'list' must be an array"),
        (#"{"name":1}"#, "field 'name' must be a string"),
        (#"{"flag":"yes"}"#, "field 'flag' must be true or false"),
        (#"{"element":{"x":"1"}}"#, "field 'element.x' must be a number"),
        (#"{"element":{}}"#, "missing field 'element.x'"),
    ])
    func named(json: String, expected: String) {
        let text = Self.description(json)
        #expect(text == expected)
        for swiftName in ["Dictionary", "Array", "String", "Double", "Optional", "Inner", "Payload"] {
            #expect(text?.contains(swiftName) != true)
        }
    }
}
