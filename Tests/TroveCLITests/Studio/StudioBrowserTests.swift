import Foundation
import Testing
import Trove

/// A fresh folder for one browser test's files.
private func folder(_ name: String = #function) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-cli-tests")
        .appendingPathComponent("browser-\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// The photo diary example's file, with `extra` more photos imported (Korean memos, a date each).
private func photoDiaryFile(extra: Int) throws -> String {
    let file = try folder().appendingPathComponent("photos.trove").path
    #expect(try run(built("PhotoDiary"), [file]).status == 0)
    let lines = (0..<extra).map { index in
        #"{"id": "extra-\#(index)", "date": "2024-04-\#(String(format: "%02d", index % 28 + 1))", "dateAdded": "2024-04-01T10:00:00Z", "memo": "산책 \#(index): 벚꽃이 피었다", "mood": "\#(index % 2 == 0 ? "happy" : "calm")"}"#
    }
    let imported = try trove(
        "import", file, "--type", "PhotoData", "-", "--format", "jsonl", input: lines.joined(separator: "\n"))
    #expect(imported.status == 0, "\(imported.err)")
    return file
}

/// The page's grid: the text of one column's cells, top to bottom.
private func column(_ browser: WebDriver, _ property: String) throws -> [String] {
    try browser.run(
        """
        return Array.from(document.querySelectorAll('#grid-space .row'))
          .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
          .map(row => { const cell = row.querySelector(`.cell[data-property="${arguments[0]}"]`); return cell ? cell.textContent : null; });
        """, [property]) as? [String] ?? []
}

/// The studio on `url` in a browser, showing its StudioPhoto objects.
private func openPhotos(_ url: URL) throws -> (StudioServer, WebDriver) {
    let server = try StudioServer(file: url.path)
    let browser = try WebDriver(height: 700)
    try browser.open(server.address)
    try browser.wait("the type list") { try browser.texts("#type-list li").contains { $0.hasPrefix("StudioPhoto") } }
    try browser.click("#type-list li[data-type='StudioPhoto']")
    return (server, browser)
}

private func status(_ browser: WebDriver) throws -> String {
    try browser.run("return document.getElementById('status').textContent") as? String ?? ""
}

@Suite("trove studio in a real browser (headless Chromium through WebDriver)", .serialized)
struct StudioBrowserTests {
    @Test("the photo diary: types, a query and its error, sorting, an edit that reaches the file, a row another process adds")
    func photoDiary() throws {
        let file = try photoDiaryFile(extra: 20)
        let server = try StudioServer(file: file)
        let browser = try WebDriver(height: 700)  // shorter than the grid's 22 rows: it scrolls
        try browser.open(server.address)

        // The types, with counts.
        try browser.wait("the type list") { try browser.texts("#type-list li").contains("PhotoData22") }
        try browser.wait("the first page") { try status(browser).hasPrefix("22 PhotoData objects") }
        // The rows are drawn on the frame after the status line changes.
        try browser.wait("the Korean memos in the grid") { try column(browser, "memo").contains("산책 0: 벚꽃이 피었다") }
        try browser.screenshot("1-photos-grid")

        // A query in Korean.
        let filter = try browser.element("#filter")
        try filter.type("memo CONTAINS '벚꽃' AND mood == 'calm'\u{E007}")
        try browser.wait("the query's answer") { try status(browser).hasPrefix("10 PhotoData objects matching") }
        try browser.wait("only the calm photos in the grid") {
            let moods = try column(browser, "mood")
            return moods.count == 10 && moods.allSatisfy { $0 == "calm" }
        }
        try browser.screenshot("2-photos-query")

        // A bad query: the error points at the position.
        try browser.run("document.getElementById('filter').value = ''")
        try filter.type("memo CONTAINZ '벚꽃'\u{E007}")
        let error = try browser.element("#query-error:not([hidden])")
        #expect(try error.text.contains("     ^"))
        #expect(try error.text.contains("at position 5"))
        try browser.screenshot("3-photos-query-error")

        // Sort by date, then the other way.
        try browser.run("document.getElementById('filter').value = ''")
        try filter.type("\u{E007}")
        try browser.wait("every object again") { try status(browser).hasPrefix("22 PhotoData objects") }
        let header = ".hcell[data-property='date']"
        try browser.click(header)
        try browser.wait("ascending dates") {
            let dates = try column(browser, "date")  // the rows drawn: those in view and a few more
            return dates.count >= 10 && dates == dates.sorted() && dates.first == "2024-04-01"
        }
        try browser.click(header)
        try browser.wait("descending dates") {
            let dates = try column(browser, "date")
            return dates.count >= 10 && dates == dates.sorted(by: >) && dates.first == "2024-05-03"
        }
        try browser.screenshot("4-photos-sorted")

        // Edit a memo in place; the file has it.
        let firstID = try column(browser, "id").first ?? ""
        try browser.click(".row[data-index='0'] .cell[data-property='memo']", twice: true)
        let input = try browser.element(".cell.editing input")
        try browser.run("document.querySelector('.cell.editing input').value = ''")
        try input.type("비가 와서 집에 있었다\u{E007}")
        try browser.wait("the saved memo") { try column(browser, "memo").first == "비가 와서 집에 있었다" }
        let stored = try trove("query", file, "PhotoData", "id == '\(firstID)'", "--format", "jsonl")
        #expect(stored.out.contains(#""memo":"비가 와서 집에 있었다""#), "\(stored.out)")
        try browser.screenshot("5-photos-edited")

        // A bad value: the cell is marked, the toast says why, nothing is written.
        try browser.click(".row[data-index='0'] .cell[data-property='dateAdded']", twice: true)
        _ = try browser.element(".cell.editing input")
        try browser.run("document.querySelector('.cell.editing input').value = ''")
        try browser.element(".cell.editing input").type("not a date\u{E007}")
        try browser.wait("the refusal") { try browser.elements(".cell.failed").count == 1 }
        #expect(try browser.element("#toast").text.contains("is not a value of type Date"))

        // Another process adds a photo: the grid shows it without a reload, and keeps its sort and scroll position.
        try browser.run("document.getElementById('grid-scroll').scrollTop = 90")
        let line =
            #"{"id": "live-1", "date": "2024-12-31", "dateAdded": "2024-12-31T10:00:00Z", "memo": "다른 프로세스가 추가함", "mood": "happy"}"#
        let added = try trove("import", file, "--type", "PhotoData", "-", "--format", "jsonl", input: line)
        #expect(added.status == 0, "\(added.err)")
        try browser.wait("the row another process added", seconds: 30) {
            try column(browser, "memo").first == "다른 프로세스가 추가함" && status(browser).hasPrefix("23 PhotoData objects")
        }
        #expect(try browser.texts("#type-list li").contains("PhotoData23"))
        #expect(try browser.run("return document.getElementById('grid-scroll').scrollTop") as? Int == 90)
        try browser.screenshot("6-photos-live")
        #expect(server.stop() == 0)
    }

    @Test(
        "a 44 MB string: the grid shows its length and start, the side panel its first 100,000 characters and a link to all of it"
    )
    func aLongStringStaysResponsive() throws {
        let url = try studioFile(8)
        let long = String(repeating: "긴 메모 ", count: 4_000_000)  // 20M characters, 44 MB of UTF-8
        do {
            let db = try Database(fileURL: url)
            try db.write { db.object(ofType: StudioPhoto.self, forPrimaryKey: "photo-1")!.mood = long }
        }
        let (server, browser) = try openPhotos(url)
        try browser.wait("the grid with the cut string", seconds: 30) {
            try column(browser, "mood").contains { $0.hasPrefix("20,000,000 characters 긴 메모") }
        }
        let shown = try column(browser, "mood").first { $0.hasPrefix("20,000,000 characters") } ?? ""
        #expect(shown.count < 1_100)
        try browser.screenshot("long-string-grid")
        try browser.click(".cell[data-property='mood'] .more")
        try browser.wait("the value's start in the side panel, and the whole text's length", seconds: 30) {
            try browser.run("const t = document.querySelector('textarea.whole'); return t ? t.value.length : 0") as? Int
                == 100_000
                && browser.run("return document.querySelector('a.open-whole').dataset.length") as? String
                    == String(long.utf16.count)
        }
        #expect(try browser.element("a.open-whole").text.hasPrefix("The first 100,000 of 20,000,000 characters"))
        try browser.screenshot("long-string-panel")
        #expect(server.stop() == 0)
    }

    @Test("columns are as wide as what they hold and drag wider; long text is edited in a box of several lines")
    func widthsAndLongText() throws {
        let url = try studioFile(8)
        let long = "첫 줄: 비가 그치고 산책을 나갔다.\n둘째 줄: 벚꽃이 피어 있었다."
        do {
            let db = try Database(fileURL: url)
            try db.write { db.object(ofType: StudioPhoto.self, forPrimaryKey: "photo-2")!.memo = long }
        }
        let (server, browser) = try openPhotos(url)
        try browser.wait("the grid") { try column(browser, "memo").count >= 8 }
        func width(_ selector: String) throws -> Int {
            try browser.run("return document.querySelector(arguments[0]).offsetWidth", [selector]) as? Int ?? 0
        }
        let memo = try width(".hcell[data-property='memo']")
        let rating = try width(".hcell[data-property='rating']")
        #expect(memo > rating, "text is wider than numbers")
        #expect(try width(".row[data-index='0'] .cell[data-property='memo']") == memo)
        // Dragging the header's right edge widens the column, the rows with it.
        try browser.element(".hcell[data-property='memo'] .resize").drag(by: 120)
        try browser.wait("the wider column") { try width(".hcell[data-property='memo']") == memo + 120 }
        #expect(try width(".row[data-index='0'] .cell[data-property='memo']") == memo + 120)
        try browser.screenshot("columns-resized")

        // The long memo opens in a box of several lines; Enter adds a line, Ctrl+Enter saves.
        try browser.click(".row[data-index='2'] .cell[data-property='memo']", twice: true)
        let box = try browser.element(".cell.editing textarea.long-edit")
        #expect(try browser.run("return document.querySelector('.cell.editing textarea').value") as? String == long)
        try browser.run("document.querySelector('.cell.editing textarea').value = ''")
        try box.type("고친 첫 줄\u{E007}고친 둘째 줄")
        #expect(try browser.elements(".cell.editing textarea").count == 1, "Enter adds a line, it does not save")
        try browser.screenshot("long-text-editing")
        try box.type("\u{E009}\u{E007}\u{E000}")
        try browser.wait("the saved memo") { try browser.elements(".cell.editing").isEmpty }
        let stored = try trove("query", url.path, "StudioPhoto", "id == 'photo-2'", "--format", "jsonl")
        #expect(stored.out.contains(#""memo":"고친 첫 줄\n고친 둘째 줄""#), "\(stored.out)")
        #expect(server.stop() == 0)
    }

    @Test("the chat: follow a link, then who links here; the schema diagram; a chart; add and delete with confirmation")
    func chat() throws {
        let file = try folder().appendingPathComponent("chat.trove").path
        #expect(try run(built("Chat"), [file]).status == 0)
        let server = try StudioServer(file: file)
        let browser = try WebDriver()
        try browser.open(server.address)
        try browser.click("#type-list li[data-type='ChatMessage']")
        try browser.wait("the messages") { try status(browser).contains("ChatMessage object") }

        // A message's sender (declared User, holding a Me or an OtherUser): the first message is mine.
        try browser.click(".row[data-index='0'] .cell[data-property='sender'] .link")
        try browser.wait("the linked Me") { try browser.texts("#drawer-body .card h3").first?.hasPrefix("Me") == true }
        #expect(try browser.element("#drawer-title").text.contains("sender → Me"))
        // The second is Bo's: the link opens the OtherUser; its rooms (linking objects) open the room.
        try browser.click(".row[data-index='1'] .cell[data-property='sender'] .link")
        try browser.wait("the linked user") { try browser.texts("#drawer-body .card h3").first?.hasPrefix("OtherUser") == true }
        #expect(try browser.element("#drawer-title").text.contains("sender → OtherUser"))
        try browser.screenshot("7-chat-link")
        try browser.click("#drawer-body .coll")
        try browser.wait("the room linking to the user") {
            try browser.texts("#drawer-body .card h3").first?.hasPrefix("ChatRoom") == true
        }
        try browser.screenshot("8-chat-linking-objects")

        // The schema diagram names every type and draws the links.
        try browser.click("#show-schema")
        try browser.wait("the diagram") { try browser.elements("#modal svg text.type-name").count >= 5 }
        #expect(try browser.texts("#modal svg text.type-name").contains("ChatRoom"))
        #expect(try browser.elements("#modal svg path[marker-end]").count >= 3)
        try browser.screenshot("9-chat-schema")
        try browser.click("#modal-close")

        // A chart of the messages' state.
        try browser.click(".hcell[data-property='state'] .chart")
        try browser.wait("the chart") { try browser.elements("#modal svg rect.bar").count >= 2 }
        try browser.screenshot("10-chat-chart")
        try browser.click("#modal-close")

        // Add a user through the form, then delete it, confirming.
        try browser.click("#type-list li[data-type='OtherUser']")
        try browser.wait("the users") { try status(browser).hasPrefix("2 OtherUser objects") }
        try browser.click("#add-object")
        try browser.element("#modal input[name='id']").type("minji")
        try browser.element("#modal input[name='name']").type("민지")
        try browser.click("#modal button[type='submit']")
        try browser.wait("the added user") { try status(browser).hasPrefix("3 OtherUser objects") }
        try browser.wait("the added user's row") { try column(browser, "name").contains("민지") }
        #expect(try trove("query", file, "OtherUser", "id == 'minji'", "--format", "jsonl").out.contains("민지"))
        try browser.screenshot("11-chat-added")
        let row = try #require(
            try browser.run(
                "return Array.from(document.querySelectorAll('#grid-space .row')).find(r => r.textContent.includes('민지')).dataset.index"
            )
                as? String)
        try browser.click(".row[data-index='\(row)'] button.delete")
        try browser.acceptAlert()
        try browser.wait("the deleted user gone") { try status(browser).hasPrefix("2 OtherUser objects") }
        #expect(try trove("query", file, "OtherUser", "id == 'minji'", "--format", "jsonl").out.isEmpty)
        #expect(server.stop() == 0)
    }

    @Test("--read-only: the page says so, offers no edits, and a double click changes nothing")
    func readOnly() throws {
        let file = try photoDiaryFile(extra: 2)
        let server = try StudioServer(file: file, "--read-only")
        let browser = try WebDriver()
        try browser.open(server.address)
        try browser.wait("the grid") { try status(browser).hasPrefix("4 PhotoData objects") }
        #expect(try browser.element("#mode").isDisplayed)
        #expect(try browser.elements("button.delete").isEmpty)
        #expect(try browser.elements(".cell.editable").isEmpty)
        try browser.click(".row[data-index='0'] .cell[data-property='memo']", twice: true)
        #expect(try browser.elements(".cell.editing").isEmpty)
        try browser.screenshot("12-read-only")
    }
}
