@testable import RoomcastCore
import Testing

@Suite("TextTable")
struct TextTableTests {
    @Test("columns are padded to their widest cell, numbers aligned right, no trailing spaces")
    func alignment() {
        var table = TextTable(headers: ["NAME", "COUNT", "NOTE"], rightAligned: [1])
        table.rows = [["alice", "2", "x"], ["bo", "1234", ""]]
        #expect(
            table.render() == """
                  NAME   COUNT  NOTE
                  alice      2  x
                  bo      1234

                """
        )
    }

    @Test("fields line their values up after the longest label")
    func fields() {
        #expect(TextTable.fields([("name", "a"), ("elements", "3")]) == "  name      a\n  elements  3\n")
        #expect(TextTable.count(1, "socket") == "1 socket")
        #expect(TextTable.count(0, "socket") == "0 sockets")
    }
}
