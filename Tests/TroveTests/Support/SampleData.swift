import Foundation

@testable import Trove

/// Ana owns Rex (3) and two chores; Bo owns Tom (9) and one, done; Cy owns nothing.
func addOwners(to db: Database) throws {
    try db.write {
        for (name, pet, chores) in [("Ana", "Rex", ["dishes", "laundry"]), ("Bo", "Tom", ["bins"]), ("Cy", nil, [])] {
            let owner = Owner()
            owner.name = name
            if let pet {
                owner.pet = Pet()
                owner.pet?.name = pet
                owner.pet?.age = name == "Ana" ? 3 : 9
                owner.pet?.owner = owner
            }
            try db.add(owner)
            for title in chores {
                let chore = Chore()
                chore.title = title
                chore.owner = owner
                chore.done = title == "bins"
                try db.add(chore)
            }
        }
    }
}

/// Three playlists: "a" (hit, b-side, hit; tags Rock, live), "b" (b-side; jazz), "c" (empty).
func addPlaylists(to db: Database) throws {
    try db.write {
        let hit = Song()
        hit.title = "hit"
        hit.seconds = 200
        let bSide = Song()
        bSide.title = "b-side"
        bSide.seconds = 100
        for (name, songs, tags) in [("a", [hit, bSide, hit], ["Rock", "live"]), ("b", [bSide], ["jazz"]), ("c", [], [])] {
            let list = Playlist()
            list.name = name
            list.songs.append(contentsOf: songs)
            list.tags.append(contentsOf: tags)
            try db.add(list)
        }
    }
}
