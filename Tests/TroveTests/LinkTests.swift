import Foundation
import Testing

@testable import Trove

final class Owner: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var pet: Pet?
    @Persisted(originProperty: "owner") var chores: LinkingObjects<Chore>
}

/// Holds pets in each kind of collection, for deletes of a held pet.
final class Keeper: Object {
    @Persisted var name = ""
    @Persisted var walked: List<Pet>
    @Persisted var fed: MutableSet<Pet>
    @Persisted var seats: Map<String, Pet?>
}

final class Pet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var owner: Owner?
}

final class Chore: Object {
    @Persisted var title = ""
    @Persisted var done = false
    @Persisted var owner: Owner?
}

/// A chain with cascades: deleting a Folder deletes its files' links down the chain, and back.
final class Folder: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(deleteRule: .cascade) var child: Folder?
    @Persisted(deleteRule: .cascade) var readme: Note?
}

final class Note: Object {
    @Persisted var text = ""
    @Persisted(deleteRule: .deny) var attachment: Pet?
}

/// Linked to only by a type a later handle declares (``LinkTests``' schema test).
final class Lone: Object {
    @Persisted var name = ""
}

final class LoneHolder: Object {
    @Persisted var name = ""
    @Persisted var one: Lone?
    @Persisted var many: List<Lone>
}

@Suite struct LinkTests {
    @Test(
        "a handle that deleted before another handle declared a type linking to the deleted type still takes the new links out"
    )
    func deletesFollowLinksFromTypesDeclaredSince() throws {
        let first = try makeDatabase { $0.objectTypes = [Lone.self] }
        let lones = (0..<3).map { index -> Lone in
            let lone = Lone()
            lone.name = "lone \(index)"
            return lone
        }
        try first.write { try first.add(lones) }
        // Nothing links to Lone yet: this handle learns so deleting the first.
        try first.write { try first.delete(lones[0]) }
        var configuration = first.configuration
        configuration.objectTypes = [Lone.self, LoneHolder.self]
        let second = try Database(configuration: configuration)
        let held = try #require(second.objects(Lone.self).filter("name == 'lone 1'").first)
        let holder = LoneHolder()
        holder.name = "holder"
        holder.one = held
        holder.many.append(objectsIn: [held, held])
        try second.write { try second.add(holder) }
        first.refresh()
        try first.write { try first.delete(lones[1]) }
        second.refresh()
        #expect(holder.one == nil)
        #expect(holder.many.isEmpty)
        expectValid(second)
        expectValid(first)
    }

    @Test func addingAnObjectAddsWhatItLinksToAndTheLinkSurvivesReopen() throws {
        var configuration: Configuration
        do {
            let db = try makeDatabase()
            configuration = db.configuration
            let owner = Owner()
            owner.name = "Ana"
            owner.pet = Pet()
            owner.pet?.name = "Rex"
            try db.write { try db.add(owner) }
            #expect(db.objects(Pet.self).count == 1)
            #expect(owner.pet?.name == "Rex")
            #expect(owner.pet?.isManaged == true)
            expectValid(db)
        }
        // Reopened as an app would on its next launch: the file and its key, the types found in it.
        let key = configuration.encryptionKey
        configuration = Configuration(fileURL: configuration.fileURL)
        configuration.encryptionKey = key
        let db = try Database(configuration: configuration)
        let owner = try #require(db.object(ofType: Owner.self, forPrimaryKey: "Ana"))
        #expect(owner.pet?.name == "Rex")
        #expect(owner.pet?.age == 0)
    }

    /// Ana and her pet Rex, unmanaged, each linking to the other.
    private func ownerAndPetLinkingEachOther() -> (Owner, Pet) {
        let owner = Owner()
        owner.name = "Ana"
        let pet = Pet()
        pet.name = "Rex"
        owner.pet = pet
        pet.owner = owner
        return (owner, pet)
    }

    @Test("two unmanaged objects that link to each other are freed once added and released")
    func aCycleOfAddedObjectsIsFreed() throws {
        let db = try makeDatabase()
        weak var weakOwner: Owner?
        weak var weakPet: Pet?
        do {
            let (owner, pet) = ownerAndPetLinkingEachOther()
            weakOwner = owner
            weakPet = pet
            try db.write { try db.add(owner) }
            #expect(owner.pet?.owner?.name == "Ana")  // read back from the file
        }
        #expect(weakOwner == nil)
        #expect(weakPet == nil)
        #expect(db.objects(Pet.self).first?.owner?.name == "Ana")
    }

    @Test func anUpsertAlsoUpsertsLinkedObjectsWithPrimaryKeys() throws {
        let db = try makeDatabase()
        let folder = Folder()
        folder.name = "docs"
        try db.write { try db.add(folder) }
        // A fresh, unmanaged graph that names an existing Folder as its child.
        func graph() -> Folder {
            let root = Folder()
            root.name = "root"
            root.child = Folder()
            root.child?.name = "docs"
            root.child?.readme = Note()
            root.child?.readme?.text = "read me"
            return root
        }
        expectTroveError(.primaryKeyExists) { try db.write { try db.add(graph()) } }
        try db.write { try db.add(graph(), update: .modified) }
        #expect(db.objects(Folder.self).count == 2)
        #expect(db.object(ofType: Folder.self, forPrimaryKey: "docs")?.readme?.text == "read me")
        #expect(db.object(ofType: Folder.self, forPrimaryKey: "root")?.child?.name == "docs")
        expectValid(db)
    }

    @Test func deletingASequenceThrowsWhereDeletingOneObjectWould() throws {
        let db = try makeDatabase()
        let folders = (1...3).map { index in
            let folder = Folder()
            folder.name = "f\(index)"
            return folder
        }
        try db.write { try db.add(folders) }
        expectTroveError(.notInWriteTransaction) { try db.delete(folders) }
        expectTroveError(.notInWriteTransaction) { try db.delete([Folder]()) }
        expectTroveError(.invalidObject) { try db.write { try db.delete([Folder()]) } }
        try db.write { try db.delete(folders[0]) }
        expectTroveError(.invalidObject) { try db.write { try db.delete(folders) } }
        #expect(db.objects(Folder.self).count == 2)  // the failed write deleted nothing
        // A cascade or a duplicate deleting a later element of the sequence is no error.
        try db.write { folders[1].child = folders[2] }
        try db.write { try db.delete([folders[1], folders[2], folders[1]]) }
        #expect(db.objects(Folder.self).isEmpty)
    }

    @Test func settingALinkInsideAWriteChangesItAndNilClearsIt() throws {
        let db = try makeDatabase()
        let owner = Owner()
        owner.name = "Ana"
        try db.write { try db.add(owner) }
        #expect(owner.pet == nil)
        let rex = Pet()
        rex.name = "Rex"
        try db.write { owner.pet = rex }  // an unmanaged target is added
        #expect(rex.isManaged)
        #expect(owner.pet == rex)
        let tom = Pet()
        tom.name = "Tom"
        try db.write {
            try db.add(tom)
            owner.pet = tom
        }
        #expect(owner.pet?.name == "Tom")
        try db.write { owner.pet = nil }
        #expect(owner.pet == nil)
        #expect(db.objects(Pet.self).count == 2)  // unlinking deletes nothing
        expectValid(db)
    }

    @Test func deletingATargetNullsEveryLinkToIt() throws {
        let db = try makeDatabase()
        let rex = Pet()
        rex.name = "Rex"
        let owners = (0..<3).map { index -> Owner in
            let owner = Owner()
            owner.name = "owner \(index)"
            owner.pet = rex
            return owner
        }
        try db.write { try db.add(owners) }
        #expect(db.objects(Pet.self).count == 1)  // added once, linked three times
        try db.write { try db.delete(rex) }
        for owner in owners { #expect(owner.pet == nil) }
        expectValid(db)
    }

    @Test("deleting a pet held by many lists, sets and maps takes it out of each, and only it")
    func deletingATargetHeldByCollectionsTakesItOutOfEach() throws {
        let db = try makeDatabase()
        let pets = ["Rex", "Bo", "Kai"].map { name -> Pet in
            let pet = Pet()
            pet.name = name
            return pet
        }
        let (rex, bo, kai) = (pets[0], pets[1], pets[2])
        try db.write {
            for index in 0..<300 {
                let keeper = Keeper()
                keeper.name = "keeper \(index)"
                // Rex twice in the list (long lists span several chunks), in the set, and in one seat of the map.
                keeper.walked.append(
                    objectsIn: index % 3 == 0 ? Array(repeating: [rex, bo, rex], count: 300).flatMap { $0 } : [rex, bo, rex])
                keeper.fed.insert(objectsIn: index % 2 == 0 ? [rex, kai] : [kai])
                keeper.seats["front"] = rex
                keeper.seats["back"] = bo
                try db.add(keeper)
            }
        }
        try db.write { try db.delete(rex) }
        for (index, keeper) in db.objects(Keeper.self).enumerated() {
            #expect(keeper.walked.map(\.name) == Array(repeating: "Bo", count: index % 3 == 0 ? 300 : 1))
            #expect(keeper.fed.map(\.name) == ["Kai"])
            #expect(keeper.seats.keys.sorted() == ["back", "front"] && keeper.seats["front"]! == nil)
            #expect(keeper.seats["back"]??.name == "Bo")
        }
        expectValid(db)
        // The others keep their inverse links: deleting them empties what held them.
        try db.write {
            try db.delete(bo)
            try db.delete(kai)
        }
        #expect(db.objects(Keeper.self).allSatisfy { $0.walked.isEmpty && $0.fed.isEmpty && $0.seats["back"]! == nil })
        expectValid(db)
    }

    @Test func cyclesAddOnceAndReadBothWays() throws {
        let db = try makeDatabase()
        let (owner, pet) = ownerAndPetLinkingEachOther()
        try db.write { try db.add(owner) }
        #expect(db.objects(Owner.self).count == 1)
        #expect(db.objects(Pet.self).count == 1)
        #expect(owner.pet?.owner?.name == "Ana")
        #expect(owner.pet?.owner?.pet?.name == "Rex")
        try db.write { try db.delete(owner) }
        #expect(pet.owner == nil)
        expectValid(db)
    }

    @Test func linkingObjectsAreLiveQueryableAndSortable() throws {
        let db = try makeDatabase()
        let ana = Owner()
        ana.name = "Ana"
        let bo = Owner()
        bo.name = "Bo"
        #expect(ana.chores.isEmpty)  // unmanaged: no inverse links yet
        try db.write {
            try db.add([ana, bo])
            for (index, title) in ["dishes", "laundry", "bins"].enumerated() {
                let chore = Chore()
                chore.title = title
                chore.done = index == 1
                chore.owner = index < 2 ? ana : bo
                try db.add(chore)
            }
        }
        #expect(ana.chores.count == 2)
        #expect(bo.chores.map(\.title) == ["bins"])
        #expect(try ana.chores.filter("done == false").map(\.title) == ["dishes"])
        #expect(ana.chores.sorted(by: \.title).map(\.title) == ["dishes", "laundry"])
        let bins = try #require(bo.chores.first)
        try db.write { bins.owner = ana }
        #expect(ana.chores.count == 3)
        #expect(bo.chores.isEmpty)
        try db.write { try db.delete(ana.chores.sorted(by: \.title).first!) }
        #expect(ana.chores.sorted(by: \.title).map(\.title) == ["dishes", "laundry"])
        // Queries test the linking objects themselves: `%@ IN chores`, `ANY chores == %@`.
        let dishes = try #require(db.objects(Chore.self).filter("title == 'dishes'").first)
        let owners = db.objects(Owner.self)
        #expect(try owners.filter("%@ IN chores", dishes).map(\.name) == ["Ana"])
        #expect(try owners.filter("NOT %@ IN chores", dishes).map(\.name) == ["Bo"])
        #expect(try owners.filter("ANY chores != %@", dishes).map(\.name) == ["Ana"])  // laundry
        #expect(try owners.filter("ANY chores == nil").isEmpty)
        let laundry = try #require(db.objects(Chore.self).filter("title == 'laundry'").first)
        #expect(try owners.filter("ANY chores IN %@", [dishes, laundry]).map(\.name) == ["Ana"])
        #expect(try owners.filter("%@ IN chores", Chore()).isEmpty)  // not stored: no object's
        #expect(throws: TroveError.self) { try owners.filter("%@ IN chores", ana) }  // an Owner, not a Chore
        #expect(throws: TroveError.self) { try owners.filter("chores > %@", dishes) }
        expectValid(db)
    }

    @Test func cascadeFollowsChainsAndCyclesWithoutLooping() throws {
        let db = try makeDatabase()
        let folders = (0..<4).map { index -> Folder in
            let folder = Folder()
            folder.name = "f\(index)"
            return folder
        }
        for index in 0..<3 { folders[index].child = folders[index + 1] }
        folders[3].child = folders[1]  // a cycle f1 -> f2 -> f3 -> f1
        let note = Note()
        note.text = "read me"
        folders[2].readme = note
        let keep = Folder()
        keep.name = "keep"
        try db.write { try db.add(folders + [keep]) }
        #expect(db.objects(Folder.self).count == 5)
        try db.write { try db.delete(folders[0]) }
        #expect(db.objects(Folder.self).map(\.name) == ["keep"])
        #expect(db.objects(Note.self).isEmpty)
        expectValid(db)
    }

    @Test func denyBlocksTheDeleteNamesTheBlockerAndChangesNothing() throws {
        let db = try makeDatabase()
        let folder = Folder()
        folder.name = "docs"
        let note = Note()
        note.text = "keep"
        let pet = Pet()
        pet.name = "Rex"
        note.attachment = pet
        folder.readme = note
        try db.write { try db.add(folder) }
        try db.write {
            let error = expectTroveError(.deleteDenied) { try db.delete(folder) }
            #expect(error?.message.contains("attachment") == true)
            #expect(error?.message.contains("deleteRule: .deny") == true)
        }
        #expect(db.objects(Folder.self).count == 1)
        #expect(db.objects(Note.self).count == 1)
        #expect(folder.readme?.attachment?.name == "Rex")
        try db.write {
            folder.readme?.attachment = nil
            try db.delete(folder)
        }
        #expect(db.objects(Note.self).isEmpty)
        #expect(db.objects(Pet.self).count == 1)  // cascade stops where the links do
        expectValid(db)
    }

    @Test func aRolledBackLinkChangeLeavesTheGraphAsItWas() throws {
        let db = try makeDatabase()
        let owner = Owner()
        owner.name = "Ana"
        owner.pet = Pet()
        try db.write { try db.add(owner) }
        let pet = try #require(owner.pet)
        try db.beginWrite()
        owner.pet = nil
        try db.delete(pet)
        db.cancelWrite()
        #expect(owner.pet == pet)
        #expect(!pet.isInvalidated)
        expectValid(db)
    }

    @Test func aLinkToTheWrongTypeOrAnotherHandleIsRefused() throws {
        let db = try makeDatabase()
        let other = try Database(configuration: db.configuration)
        let owner = Owner()
        owner.name = "Ana"
        try db.write { try db.add(owner) }
        let foreign = Pet()
        try other.write { try other.add(foreign) }
        expectTroveError(.invalidObject) { try db.write { owner.pet = foreign } }
        #expect(owner.pet == nil)
        expectValid(db)
    }

    @Test func queriesCompareLinksWithObjectsAndNil() throws {
        let db = try makeDatabase()
        let rex = Pet()
        rex.name = "Rex"
        try db.write {
            for name in ["a", "b", "c"] {
                let owner = Owner()
                owner.name = name
                owner.pet = name == "c" ? nil : rex
                try db.add(owner)
            }
        }
        #expect(try db.objects(Owner.self).filter("pet == %@", rex).count == 2)
        #expect(try db.objects(Owner.self).filter("pet == nil").map(\.name) == ["c"])
    }
}
