/// A plain-text table for terminals: a header row, then rows, each column padded to its widest
/// cell, two spaces apart.
struct TextTable {
    /// Column titles.
    var headers: [String]
    /// Rows of cells, one per column.
    var rows: [[String]] = []
    /// Columns aligned right (numbers).
    var rightAligned: Set<Int> = []

    /// The table, each line starting with `indent` and ending with a newline; trailing spaces trimmed.
    func render(indent: String = "  ") -> String {
        let lines = [headers] + rows
        let widths = headers.indices.map { column in lines.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        var text = ""
        for line in lines {
            let cells = headers.indices.map { column in
                let cell = line.indices.contains(column) ? line[column] : ""
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }
            var row = cells.joined(separator: "  ")
            while row.last == " " { row.removeLast() }
            text += indent + row + "\n"
        }
        return text
    }

    /// `label  value` lines with the values lined up.
    static func fields(_ pairs: [(String, String)], indent: String = "  ") -> String {
        let width = pairs.map(\.0.count).max() ?? 0
        return pairs.map { label, value in indent + label + String(repeating: " ", count: width - label.count + 2) + value + "\n" }.joined()
    }

    /// `1 socket`, `2 sockets`.
    static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }
}
