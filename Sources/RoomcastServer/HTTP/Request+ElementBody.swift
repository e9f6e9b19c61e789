import Hummingbird
import RoomcastCore

extension Request {
    /// Decodes a JSON body, reporting a refusal with the field it names.
    ///
    /// `decode(as:context:)` turns every `DecodingError` into Hummingbird's own message, which
    /// drops the field of a `dataCorrupted` error ("not valid input: unknown or read-only field");
    /// element bodies need it: a client must learn which field was refused.
    func decodeJSON<Value: Decodable>(as type: Value.Type, context: RoomcastRequestContext) async throws -> Value {
        let body = try await self.body.collect(upTo: context.maxUploadSize)
        do {
            return try JSONCoding.decode(type, from: body)
        } catch let error as DecodingError {
            throw RoomcastError(.invalidPayload, error.clientDescription)
        }
    }
}
