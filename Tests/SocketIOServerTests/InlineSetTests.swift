import SocketIOServer
import Testing

@Suite("InlineSet: a set whose first element is kept inline")
struct InlineSetTests {
    @Test("holds each element once, whichever order they come and go in")
    func setSemantics() {
        var set: InlineSet<String> = []
        #expect(set.isEmpty && set.count == 0 && Array(set).isEmpty)
        let inserted = ["a", "a", "b", "c", "b"].map { set.insert($0) }
        #expect(inserted == [true, false, true, true, false])
        #expect(set.count == 3)
        #expect(Set(set) == ["a", "b", "c"])
        #expect(set.contains("a") && set.contains("c") && !set.contains("d"))
        let absent = set.remove("d")
        #expect(absent == nil)
        #expect(set.count == 3)
    }

    @Test("removing the inline element moves another inline; the set is empty only when all are gone")
    func removingTheFirst() {
        var set: InlineSet<Int> = [1, 2, 3]
        let first = set.remove(1)
        #expect(first == 1)
        #expect(!set.isEmpty && set.count == 2 && Set(set) == [2, 3])
        #expect(!set.contains(1))
        let last = set.remove(3)
        #expect(last == 3)
        #expect(Array(set) == [2])
        let only = set.remove(2)
        #expect(only == 2)
        #expect(set.isEmpty && Array(set).isEmpty)
        // Usable again once emptied, the first element inline as before.
        let again = [4, 5].map { set.insert($0) }
        #expect(again == [true, true])
        #expect(Set(set) == [4, 5] && set.count == 2)
    }

    @Test("an element equal to one inside is not added again, however it came in")
    func equalityDecides() {
        struct Keyed: Hashable {
            let key: Int
            let label: String
            static func == (lhs: Keyed, rhs: Keyed) -> Bool { lhs.key == rhs.key }
            func hash(into hasher: inout Hasher) { hasher.combine(key) }
        }
        var set: InlineSet<Keyed> = [Keyed(key: 1, label: "first")]
        let inserted = [Keyed(key: 1, label: "again"), Keyed(key: 2, label: "second"), Keyed(key: 2, label: "again")].map { set.insert($0) }
        #expect(inserted == [false, true, false])
        #expect(set.map(\.label).sorted() == ["first", "second"])
        // Looked up by key alone, as the hub removes a session's member.
        let removed = set.remove(Keyed(key: 1, label: ""))
        #expect(removed?.label == "first")
        #expect(set.map(\.label) == ["second"])
    }
}
