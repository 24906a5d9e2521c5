import Foundation
import Testing

@testable import Trove

/// A GeoJSON point, as Realm's geospatial queries expect one: embedded, with
/// a `type` and the coordinates longitude first.
final class GeoJSONPoint: EmbeddedObject {
    @Persisted var coordinates = List<Double>()
    @Persisted var type = "Point"

    convenience init(_ latitude: Double, _ longitude: Double) {
        self.init()
        coordinates.append(contentsOf: [longitude, latitude])
    }
}

final class Cafe: Object {
    @Persisted var name = ""
    @Persisted var location: GeoJSONPoint?
    @Persisted var owner: GeoOwner?
}

/// A top-level type with the point's shape: not a place a geospatial query reads.
final class GeoOwner: Object {
    @Persisted var coordinates = List<Double>()
    @Persisted var type = "Point"
    @Persisted var label: GeoLabel?
}

/// An embedded type without coordinates.
final class GeoLabel: EmbeddedObject {
    @Persisted var type = "Point"
}

/// Geospatial queries: which embedded points lie inside a box, a polygon or a circle.
@Suite struct GeoQueryTests {
    private func cafes() throws -> Database {
        let db = try makeDatabase()
        try db.write {
            for (name, point) in [
                ("Seoul", GeoJSONPoint(37.5665, 126.9780)), ("Busan", GeoJSONPoint(35.1796, 129.0756)),
                ("Tokyo", GeoJSONPoint(35.6762, 139.6503)), ("Sydney", GeoJSONPoint(-33.8688, 151.2093)),
                ("Nowhere", nil),
            ] as [(String, GeoJSONPoint?)] {
                let cafe = Cafe(value: ["name": name])
                cafe.location = point
                try db.add(cafe)
            }
        }
        return db
    }

    private func names(_ db: Database, _ format: String, _ shape: any GeoShape) throws -> [String] {
        try db.objects(Cafe.self).filter(format, shape).map(\.name).sorted()
    }

    @Test("points, distances and shapes refuse values outside their ranges")
    func shapesCheckTheirValues() {
        #expect(Trove.GeoPoint(latitude: 90, longitude: -180) != nil)
        #expect(Trove.GeoPoint(latitude: 90.000001, longitude: 0) == nil && Trove.GeoPoint(latitude: 0, longitude: 180.5) == nil)
        #expect(
            Trove.GeoPoint(latitude: .nan, longitude: 0) == nil && Trove.GeoPoint(latitude: 0, longitude: 0, altitude: -1) == nil)
        #expect(Distance.kilometers(-1) == nil && Distance.radians(.nan) == nil)
        let earth = Distance.kilometers(40_075)!
        #expect(abs(earth.radians - 2 * .pi) < 0.001 && abs(earth.asKilometers() - 40_075) < 1e-6)
        #expect(abs(Distance.miles(1)!.asKilometers() - 1.609344) < 1e-9 && Distance.degrees(180)!.radians == .pi)
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (0, 0)]) == nil)  // three points
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (2, 0), (3, 3)]) == nil)  // not closed
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (2, 0), (0, 0)], holes: [[(0, 0)]]) == nil)
        #expect(GeoCircle(center: (0, 0), radiusInRadians: -1) == nil && GeoBox(bottomLeft: (-91, 0), topRight: (0, 0)) == nil)
        #expect(GeoCircle(center: (0, 0), radiusInRadians: 10)!.description == "GeoCircle([0, 0, 0], 10)")
    }

    @Test(
        "GEOWITHIN (or IN, as NSPredicate writes it) keeps the objects whose embedded point is inside a box, a polygon or a circle"
    )
    func withinShapes() throws {
        let db = try cafes()
        let korea = GeoBox(bottomLeft: (33, 124), topRight: (39, 132))!
        #expect(try names(db, "location GEOWITHIN %@", korea) == ["Busan", "Seoul"])
        #expect(try names(db, "location IN %@", korea) == ["Busan", "Seoul"])
        #expect(try names(db, "NOT location GEOWITHIN %@", korea) == ["Nowhere", "Sydney", "Tokyo"])
        // A triangle around Korea and Japan, with a hole around Busan.
        let triangle = GeoPolygon(
            outerRing: [(30, 120), (45, 130), (30, 150), (30, 120)],
            holes: [[(34, 128), (36, 128), (36, 130), (34, 130), (34, 128)]])!
        #expect(try names(db, "location GEOWITHIN %@", triangle) == ["Seoul", "Tokyo"])
        // 350 km from Seoul reaches Busan (325 km away); 100 km does not.
        let seoul = (37.5665, 126.9780)
        #expect(
            try names(db, "location GEOWITHIN %@", GeoCircle(center: seoul, radius: .kilometers(350)!)!) == ["Busan", "Seoul"])
        #expect(try names(db, "location GEOWITHIN %@", GeoCircle(center: seoul, radius: .kilometers(100)!)!) == ["Seoul"])
        // Only a point counts: the same coordinates with another type do not.
        try db.write { try db.objects(Cafe.self).filter("name == 'Busan'").first?.location?.type = "Polygon" }
        #expect(try names(db, "location GEOWITHIN %@", korea) == ["Seoul"])
    }

    @Test("a ring encloses the smaller region it bounds, whichever way its points go; shortest-path edges bulge poleward")
    func ringsAreNormalized() throws {
        let db = try cafes()
        let clockwise = GeoPolygon(outerRing: [(33, 124), (39, 124), (39, 132), (33, 132), (33, 124)])!
        let counterClockwise = GeoPolygon(outerRing: [(33, 124), (33, 132), (39, 132), (39, 124), (33, 124)])!
        #expect(try names(db, "location GEOWITHIN %@", clockwise) == ["Busan", "Seoul"])
        #expect(try names(db, "location GEOWITHIN %@", counterClockwise) == ["Busan", "Seoul"])
        // A box's top edge runs along a great circle: north of its corners' latitude in between.
        try db.write { try db.add(Cafe(value: ["name": "Edge", "location": GeoJSONPoint(60.05, 15)])) }
        #expect(try names(db, "location GEOWITHIN %@", GeoBox(bottomLeft: (50, 0), topRight: (60, 30))!) == ["Edge"])
    }

    @Test("a shape on the wrong kind of property, or an invalid polygon, fails the query with a message")
    func refusedQueries() throws {
        let db = try cafes()
        let circle = GeoCircle(center: (0, 0), radiusInRadians: 10)!
        func message(_ format: String, _ argument: Any) -> String? {
            do {
                _ = try db.objects(Cafe.self).filter(format, argument)
                return nil
            } catch let error as TroveError {
                return error.kind == .invalidQuery ? error.message : "kind \(error.kind)"
            } catch {
                return "\(error)"
            }
        }
        #expect(message("owner GEOWITHIN %@", circle)?.contains("'GeoOwner' is at the top level") == true)
        #expect(message("owner.label GEOWITHIN %@", circle)?.contains("wrong format for a geoWithin query") == true)
        #expect(message("name GEOWITHIN %@", circle)?.contains("GEOWITHIN applies to a link") == true)
        #expect(message("location GEOWITHIN %@", 5)?.contains("GEOWITHIN needs a GeoBox") == true)
        let crossing = GeoPolygon(outerRing: [(50, -50), (55, 55), (-50, 50), (70, -25), (50, -50)])!
        #expect(message("location GEOWITHIN %@", crossing)?.contains("Edges 0 and 2 cross") == true)
        let outside = GeoPolygon(
            outerRing: [(0, 0), (0, 1), (1, 1), (1, 0), (0, 0)], holes: [[(2, 2), (2, 3), (3, 3), (3, 2), (2, 2)]])!
        #expect(message("location GEOWITHIN %@", outside)?.contains("Secondary ring 1 not contained") == true)
    }
}
