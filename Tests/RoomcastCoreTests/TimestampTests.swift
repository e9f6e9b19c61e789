import Foundation
import RoomcastCore
import Testing

@Suite("Timestamp")
struct TimestampTests {
    @Test("the epoch is 1970-01-01T00:00:00.000Z")
    func epoch() {
        #expect(Timestamp(milliseconds: 0).description == "1970-01-01T00:00:00.000Z")
    }

    @Test(
        "ISO 8601 in UTC with exactly three fractional digits",
        arguments: [
            (1, "1970-01-01T00:00:00.001Z"),
            (999, "1970-01-01T00:00:00.999Z"),
            (1_234_567_890_123, "2009-02-13T23:31:30.123Z"),
            (946_684_799_999, "1999-12-31T23:59:59.999Z"),
            (1_795_334_400_123, "2026-11-22T08:00:00.123Z"),
            (1_795_334_400_000, "2026-11-22T08:00:00.000Z"),
            (1_795_334_400_010, "2026-11-22T08:00:00.010Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (-1_001, "1969-12-31T23:59:58.999Z"),
        ] as [(Int64, String)]
    )
    func formatting(milliseconds: Int64, text: String) {
        #expect(Timestamp(milliseconds: milliseconds).description == text)
    }

    @Test("every millisecond of a second is shown exactly (no floating-point truncation)")
    func everyMillisecond() {
        let base: Int64 = 1_795_334_400_000
        var wrong: [String] = []
        for millisecond in Int64(0)..<1000 {
            let text = Timestamp(milliseconds: base + millisecond).description
            let expected = "2026-11-22T08:00:00." + String(repeating: "0", count: 3 - String(millisecond).count) + String(millisecond) + "Z"
            if text != expected { wrong.append("\(text) != \(expected)") }
        }
        let wrongCount = wrong.count
        #expect(wrongCount == 0, "for example \(wrong.prefix(3))")
    }

    @Test("JSON round trip keeps the millisecond")
    func jsonRoundTrip() throws {
        let values = [0, 1, 999, 1_234_567_890_123, 1_795_334_400_123] + (0..<200).map { 1_700_000_000_000 + Int64($0) * 7 }
        let timestamps = values.map(Timestamp.init(milliseconds:))
        let json = try JSONEncoder().encode(timestamps)
        let strings = try #require(try JSONSerialization.jsonObject(with: json) as? [String])
        #expect(strings == timestamps.map(\.description))
        #expect(try JSONDecoder().decode([Timestamp].self, from: json) == timestamps)
    }

    @Test("decodes the ISO 8601 text clients send")
    func decodesText() throws {
        let decoded = try JSONDecoder().decode([Timestamp].self, from: Data(#"["2009-02-13T23:31:30.123Z"]"#.utf8))
        #expect(decoded == [Timestamp(milliseconds: 1_234_567_890_123)])
    }

    @Test("rejects text that is not a timestamp")
    func rejectsGarbage() {
        for json in [#"["yesterday"]"#, #"[""]"#, "[1234]", "[null]"] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode([Timestamp].self, from: Data(json.utf8)) }
        }
    }

    @Test("now() is close to the system clock and ordered")
    func now() {
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let now = Timestamp.now()
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(now.milliseconds >= before - 1 && now.milliseconds <= after + 1)
        #expect(Timestamp(milliseconds: 1) < Timestamp(milliseconds: 2))
    }
}
