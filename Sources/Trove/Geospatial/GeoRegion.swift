import Foundation

/// A point of the unit sphere, or any vector in its space.
struct GeoVector: Hashable, Sendable {
    var x, y, z: Double

    init(_ x: Double, _ y: Double, _ z: Double) { (self.x, self.y, self.z) = (x, y, z) }

    static func - (a: GeoVector, b: GeoVector) -> GeoVector { GeoVector(a.x - b.x, a.y - b.y, a.z - b.z) }
    static func * (a: GeoVector, k: Double) -> GeoVector { GeoVector(a.x * k, a.y * k, a.z * k) }

    func dot(_ b: GeoVector) -> Double { x * b.x + y * b.y + z * b.z }

    func cross(_ b: GeoVector) -> GeoVector { GeoVector(y * b.z - z * b.y, z * b.x - x * b.z, x * b.y - y * b.x) }

    /// The angle between two unit vectors, in radians (exact for small angles too).
    func angle(to b: GeoVector) -> Double { atan2(sqrt(cross(b).dot(cross(b))), dot(b)) }
}

/// A shape as the set of points a geospatial query keeps: a spherical cap
/// for a circle; for a polygon or a box, rings of shortest-path edges, each
/// oriented so that it encloses the smaller region it bounds (as S2, which
/// realm-core uses, normalizes them), minus the holes.
public struct GeoRegion: Sendable {
    private enum Kind: Sendable {
        case cap(center: GeoVector, radius: Double)
        case polygon(outer: [GeoVector], holes: [[GeoVector]])
    }

    private let kind: Kind

    init(circle: GeoCircle) {
        kind = .cap(center: circle.center.unitVector, radius: circle.radians)
    }

    /// Checks the polygon as realm-core does (closed rings of at least three
    /// distinct points, no crossing edges, holes inside the outer ring and not
    /// in each other, no edge shared by two rings); throws `.invalidQuery`
    /// with the reason otherwise.
    init(polygon: GeoPolygon) throws {
        func invalid(_ reason: String) -> TroveError {
            TroveError(.invalidQuery, "Invalid region in GEOWITHIN query for parameter '\(polygon)': '\(reason)'")
        }
        var rings: [[GeoVector]] = []
        for (index, points) in ([polygon.outerRing] + polygon.holes).enumerated() {
            guard points.first == points.last else { throw invalid("Ring \(index) is not closed") }
            var ring: [GeoVector] = []
            for point in points.dropLast() where ring.last != point.unitVector { ring.append(point.unitVector) }
            if ring.count > 1, ring.first == ring.last { ring.removeLast() }
            guard ring.count >= 3 else {
                throw invalid(
                    "Ring \(index) must have at least 3 different vertices, \(ring.count) unique vertices were provided")
            }
            if let problem = GeoRegion.ringProblem(ring, points: points.dropLast()) {
                throw invalid("Ring \(index) is not valid: '\(problem)'")
            }
            ring = GeoRegion.normalized(ring)
            if index > 0, !GeoRegion.ring(rings[0], contains: ring) {
                throw invalid(
                    "Secondary ring \(index) not contained by first exterior ring - secondary rings must be holes in the first ring"
                )
            }
            rings.append(ring)
        }
        if let (first, firstEdge, second, secondEdge) = GeoRegion.sharedEdge(rings) {
            throw invalid(
                "Polygon isn't valid: 'Duplicate edge: ring \(second), edge \(secondEdge) and ring \(first), edge \(firstEdge)'")
        }
        for hole in 1..<max(rings.count, 1) {
            for other in 1..<rings.count where other != hole && GeoRegion.ring(rings[other], contains: rings[hole]) {
                throw invalid("Polygon interior rings cannot be nested: \(max(hole, other))")
            }
        }
        kind = .polygon(outer: rings[0], holes: Array(rings.dropFirst()))
    }

    /// Whether the region holds the point at `latitude` and `longitude` (degrees).
    public func contains(latitude: Double, longitude: Double) -> Bool {
        guard let point = GeoPoint(latitude: latitude, longitude: longitude)?.unitVector else { return false }
        switch kind {
        case .cap(let center, let radius):
            return center.angle(to: point) <= radius
        case .polygon(let outer, let holes):
            return GeoRegion.ring(outer, contains: point) && !holes.contains { GeoRegion.ring($0, contains: point) }
        }
    }

    // MARK: Rings

    /// Why a ring is not a simple loop: a repeated vertex, or two edges that cross.
    private static func ringProblem(_ ring: [GeoVector], points: ArraySlice<GeoPoint>) -> String? {
        let count = ring.count
        for i in 0..<count {
            for j in (i + 1)..<count where ring[i] == ring[j] {
                return "Duplicate vertices at index \(i) and \(j)"
            }
        }
        for i in 0..<count {
            for j in (i + 2)..<max(i + 2, count) where !(i == 0 && j == count - 1) {
                let (a, b) = (ring[i], ring[(i + 1) % count])
                let (c, d) = (ring[j], ring[(j + 1) % count])
                if edgesCross(a, b, c, d) {
                    func degrees(_ v: GeoVector) -> String {
                        let lat = asin(max(-1, min(1, v.z))) * 180 / .pi
                        let lng = atan2(v.y, v.x) * 180 / .pi
                        return "[" + String(format: "%.7f", lat) + ", " + String(format: "%.7f", lng) + "]"
                    }
                    return
                        "Edges \(i) and \(j) cross. Edge locations in degrees: \(degrees(a))-\(degrees(b)) and \(degrees(c))-\(degrees(d))"
                }
            }
        }
        return nil
    }

    /// Whether the arcs a–b and c–d cross at a point inside both.
    private static func edgesCross(_ a: GeoVector, _ b: GeoVector, _ c: GeoVector, _ d: GeoVector) -> Bool {
        let ab = a.cross(b)
        let cd = c.cross(d)
        let (sc, sd) = (ab.dot(c), ab.dot(d))
        let (sa, sb) = (cd.dot(a), cd.dot(b))
        guard sc * sd < 0, sa * sb < 0 else { return false }
        // The great circles cross at ±(ab × cd): the arcs share the crossing when both hold it.
        let crossing = ab.cross(cd)
        let candidate = crossing.dot(a + b) >= 0 ? crossing : crossing * -1
        return candidate.dot(c + d) > 0
    }

    /// The ring turned, if needed, so that the region on its left (the one it
    /// encloses) is the smaller: the sum of its turning angles is positive.
    private static func normalized(_ ring: [GeoVector]) -> [GeoVector] {
        turning(ring) < 0 ? ring.reversed() : ring
    }

    /// The sum of the ring's turning angles at its vertices (2π minus the
    /// area on its left).
    private static func turning(_ ring: [GeoVector]) -> Double {
        let count = ring.count
        var total = 0.0
        for i in 0..<count {
            let (a, b, c) = (ring[(i + count - 1) % count], ring[i], ring[(i + 1) % count])
            let n1 = a.cross(b)
            let n2 = b.cross(c)
            total += atan2(n1.cross(n2).dot(b), n1.dot(n2))
        }
        return total
    }

    /// Whether a normalized ring encloses `point`: the ring winds once
    /// around it as seen from the point (each edge sweeps the point's
    /// azimuth monotonically, the way the point's side of the edge says).
    private static func ring(_ ring: [GeoVector], contains point: GeoVector) -> Bool {
        let count = ring.count
        var total = 0.0
        func tangent(_ v: GeoVector) -> GeoVector { v - point * point.dot(v) }
        for i in 0..<count {
            let (a, b) = (ring[i], ring[(i + 1) % count])
            let side = point.dot(a.cross(b))
            if side == 0 { return false }  // on the great circle of an edge
            let (ta, tb) = (tangent(a), tangent(b))
            var sweep = atan2(point.dot(ta.cross(tb)), ta.dot(tb))  // in (-π, π]
            if side > 0, sweep < 0 { sweep += 2 * .pi }
            if side < 0, sweep > 0 { sweep -= 2 * .pi }
            total += sweep
        }
        return total > .pi
    }

    /// Whether every vertex of `inner` is inside `outer` and no edges cross.
    private static func ring(_ outer: [GeoVector], contains inner: [GeoVector]) -> Bool {
        guard inner.allSatisfy({ ring(outer, contains: $0) || outer.contains($0) }) else { return false }
        for i in outer.indices {
            for j in inner.indices
            where edgesCross(outer[i], outer[(i + 1) % outer.count], inner[j], inner[(j + 1) % inner.count]) {
                return false
            }
        }
        return true
    }

    /// The first edge two rings share (in either direction): the rings and the edges' indices.
    private static func sharedEdge(_ rings: [[GeoVector]]) -> (Int, Int, Int, Int)? {
        var seen: [Set<GeoVector>: (ring: Int, edge: Int)] = [:]
        for (r, ring) in rings.enumerated() {
            for e in ring.indices {
                let edge: Set<GeoVector> = [ring[e], ring[(e + 1) % ring.count]]
                if let first = seen[edge], first.ring != r { return (first.ring, first.edge, r, e) }
                seen[edge] = seen[edge] ?? (r, e)
            }
        }
        return nil
    }
}

extension GeoVector {
    static func + (a: GeoVector, b: GeoVector) -> GeoVector { GeoVector(a.x + b.x, a.y + b.y, a.z + b.z) }
}
