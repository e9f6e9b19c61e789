/// A set that keeps its first element inline and only the others in a `Set`.
///
/// Most connections use one namespace, most sockets join one room and most users have one
/// socket on a node, and a `Set` of one element allocates its storage (about 100 bytes with the
/// allocator's overhead): memory per idle socket. An empty `Set` allocates nothing, so one
/// element costs nothing here.
public struct InlineSet<Element: Hashable>: Sequence, ExpressibleByArrayLiteral {
    private var first: Element?
    private var others: Set<Element> = []

    /// An empty set.
    public init() {}

    /// A set of these elements.
    public init(arrayLiteral elements: Element...) {
        for element in elements { insert(element) }
    }

    /// Whether it holds nothing.
    public var isEmpty: Bool { first == nil }
    /// How many elements it holds.
    public var count: Int { first == nil ? 0 : 1 + others.count }
    /// Exact: `Array(set)` allocates its storage once (the hub copies a room's members per event).
    public var underestimatedCount: Int { count }

    /// Whether it holds `element`.
    public func contains(_ element: Element) -> Bool {
        first == element || others.contains(element)
    }

    /// - Returns: whether it was not there yet.
    @discardableResult
    public mutating func insert(_ element: Element) -> Bool {
        guard let first else {
            self.first = element
            return true
        }
        return first != element && others.insert(element).inserted
    }

    /// - Returns: the element removed; nil when it was not there.
    @discardableResult
    public mutating func remove(_ element: Element) -> Element? {
        // An emptied `Set` keeps its storage: let it go, as an empty one allocates nothing.
        defer { if others.isEmpty { others = [] } }
        guard first == element else { return others.remove(element) }
        // One of the others moves inline, so `first` is nil only when the set is empty.
        defer { first = others.popFirst() }
        return first
    }

    /// Its elements, the inline one first.
    public func makeIterator() -> Iterator {
        Iterator(first: first, others: others.makeIterator())
    }

    /// Goes through the inline element, then the others.
    public struct Iterator: IteratorProtocol {
        fileprivate var first: Element?
        fileprivate var others: Set<Element>.Iterator

        /// The next element, or nil at the end.
        public mutating func next() -> Element? {
            if let element = first {
                first = nil
                return element
            }
            return others.next()
        }
    }
}
