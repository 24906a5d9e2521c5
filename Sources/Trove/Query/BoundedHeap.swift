/// The first `capacity` elements offered, in the order `precedes` defines,
/// without keeping the rest: a heap whose root is the last element kept, so
/// an element that does not precede it costs one comparison.
///
/// With a strict total order (ties broken by object key, as sorts break
/// them), the elements kept are exactly the first `capacity` of a full sort.
struct BoundedHeap<Element> {
    let capacity: Int
    private let precedes: (Element, Element) -> Bool
    private var elements: [Element] = []

    init(capacity: Int, precedes: @escaping (Element, Element) -> Bool) {
        self.capacity = Swift.max(0, capacity)
        self.precedes = precedes
        elements.reserveCapacity(Swift.min(self.capacity, 1024))
    }

    /// The last element kept, once the heap is full: an element enters only
    /// if it precedes this one.
    var last: Element? { elements.count == capacity ? elements.first : nil }

    mutating func insert(_ element: Element) {
        if elements.count < capacity {
            elements.append(element)
            var child = elements.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard precedes(elements[parent], elements[child]) else { break }
                elements.swapAt(parent, child)
                child = parent
            }
        } else if capacity > 0, precedes(element, elements[0]) {
            elements[0] = element
            var parent = 0
            while true {
                var latest = parent
                let left = 2 * parent + 1
                if left < elements.count, precedes(elements[latest], elements[left]) { latest = left }
                if left + 1 < elements.count, precedes(elements[latest], elements[left + 1]) { latest = left + 1 }
                if latest == parent { break }
                elements.swapAt(parent, latest)
                parent = latest
            }
        }
    }

    /// The elements kept, first first.
    func sorted() -> [Element] { elements.sorted(by: precedes) }
}
