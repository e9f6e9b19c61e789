"""The live room console (`/console`) in a real headless Chromium, driven with Selenium.

Two browser sessions as two users, each on its own gateway node: alice signs up through the page
on node 1, bob signs in through the page on node 2, alice starts a room with bob by username, both
open it; alice adds a note and drags it, bob sees it appear and move; bob adds a note, alice
brings hers to front and bob sees the new stacking; bob hearts alice's note and both see the
count; alice edits her note's text in place and bob sees it; a second room that bob has not
opened shows its unseen badge in his list. A screenshot of bob's canvas is saved as an artifact (`$ROOMCAST_ARTIFACTS`, else
`var/artifacts/` in the repository) and its path printed.

Needs Debian's `chromium` and `chromium-driver` (scripts/setup-tests.sh installs them; the paths
can be given as `CHROMIUM` and `CHROMEDRIVER`). Selenium Manager is never asked to download
anything.
"""

import os
import re
import shutil
import uuid

import pytest
import requests

from conftest import REPOSITORY

# Selenium Manager must not try to fetch a browser or a driver: this machine has its own.
os.environ.setdefault("SE_OFFLINE", "true")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

# Bound for one UI wait, in seconds (a wait returns as soon as its condition holds).
UI_WAIT = 15
PASSWORD = "correct-horse-battery"
CONSOLE_FILES = {
    "/console": "text/html",
    "/console/": "text/html",
    "/console/console.css": "text/css",
    "/console/console.js": "text/javascript",
}


def artifact_directory():
    directory = os.environ.get("ROOMCAST_ARTIFACTS") or os.path.join(REPOSITORY, "var", "artifacts")
    os.makedirs(directory, exist_ok=True)
    return directory


def _executable(variable, *names):
    path = os.environ.get(variable)
    if path:
        return path
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"no {names[0]} on PATH: run scripts/setup-tests.sh (or set {variable})")


class Browser:
    """One headless Chromium session with helpers for waiting on the console's DOM."""

    def __init__(self, name, chromium, chromedriver, log_directory):
        self.name = name
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1400,900", "--force-device-scale-factor=1", "--no-first-run",
                         "--disable-extensions", "--disable-background-networking"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=chromedriver, log_output=os.path.join(log_directory, f"chromedriver-{name}.log"))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(UI_WAIT)

    def quit(self):
        try:
            self.driver.quit()
        except Exception:  # a browser that died already
            pass

    def wait(self, condition, message, timeout=UI_WAIT):
        """Polls `condition()` until it returns something truthy; stale nodes count as not yet."""
        def attempt(_driver):
            try:
                return condition()
            except StaleElementReferenceException:
                return False
        return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(attempt, f"{self.name}: {message}")

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def visible(self, css, message=None):
        def shown():
            nodes = [node for node in self.driver.find_elements(By.CSS_SELECTOR, css) if node.is_displayed()]
            return nodes[0] if nodes else None
        return self.wait(shown, message or f"{css} is shown")

    def type_into(self, css, text):
        field = self.visible(css)
        field.clear()
        field.send_keys(text)

    def element(self, element_id):
        return self.visible(f'#element-{element_id}', f"element {element_id} is drawn")

    def sign_in(self, url, username, password, shown_as, register=False):
        """Signs in through the page's form (`register`: creates the account, named `shown_as`)."""
        self.driver.get(url + "/console")
        self.type_into("[data-testid=username]", username)
        self.type_into("[data-testid=password]", password)
        if register:
            self.type_into("[data-testid=display-name]", shown_as)
        self.find("[data-testid=register]" if register else "[data-testid=login]").click()
        self.wait(lambda: self.find("[data-testid=me]").text == shown_as, f"signed in as {username}")
        self.wait(lambda: self.find("[data-testid=connection-status]").get_attribute("data-state") == "connected",
                  "the socket is connected")

    def open_room(self, room_id):
        self.visible(f'[data-testid=room-item][data-room-id="{room_id}"]', f"room {room_id} is listed").click()
        self.wait(lambda: self.find("[data-testid=room-view]").get_attribute("data-joined") == room_id,
                  f"room {room_id} is joined")

    def position(self, element_id):
        node = self.element(element_id)
        return float(node.get_attribute("data-x")), float(node.get_attribute("data-y"))

    def z_index(self, element_id):
        return int(self.element(element_id).get_attribute("data-z"))

    def severe_console_entries(self):
        return [entry for entry in self.driver.get_log("browser") if entry.get("level") == "SEVERE"]


@pytest.fixture
def browsers(redis_server):
    chromium = _executable("CHROMIUM", "chromium", "chromium-browser")
    chromedriver = _executable("CHROMEDRIVER", "chromedriver")
    made = []

    def make(name):
        browser = Browser(name, chromium, chromedriver, redis_server.directory)
        made.append(browser)
        return browser

    yield make
    for browser in made:
        # The last state of each page, for a failure's post-mortem.
        try:
            browser.driver.save_screenshot(os.path.join(artifact_directory(), f"console-{browser.name}-last.png"))
        except Exception:
            pass
        browser.quit()


def test_console_is_served_as_static_files_without_auth(node1):
    etags = {}
    for path, content_type in CONSOLE_FILES.items():
        response = requests.get(node1.url + path, timeout=5)
        assert response.status_code == 200, f"{path}: {response.status_code} {response.text[:200]}"
        assert response.headers["Content-Type"].startswith(content_type), (path, response.headers)
        assert "no-cache" in response.headers["Cache-Control"], (path, response.headers)
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        etags[path] = response.headers["ETag"]
        # A browser revalidating its copy gets a bodiless 304.
        again = requests.get(node1.url + path, headers={"If-None-Match": etags[path]}, timeout=5)
        assert again.status_code == 304 and again.content == b"", (path, again.status_code)
    # A stray or stale token does not stand between anyone and the page: it is not an API route.
    response = requests.get(node1.url + "/console", headers={"Authorization": "Bearer nonsense"}, timeout=5)
    assert response.status_code == 200
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]
    # No third-party resources: every script, style sheet and icon is the node's own.
    page = response.text
    for reference in re.findall(r'(?:src|href)="([^"]*)"', page):
        assert reference.startswith("/console/") or reference.startswith("data:"), reference
    assert requests.get(node1.url + "/console/nothing.js", timeout=5).status_code == 404


def test_two_browsers_watch_one_canvas_live(api, node1, node2, browsers):
    suffix = uuid.uuid4().hex[:10]
    alice_name = f"alice_{suffix}"
    bob = api.register("bob")
    room_name = f"Console e2e {suffix}"

    alice = browsers("alice")
    bob_browser = browsers("bob")

    # Alice creates her account through the page on node 1; Bob signs in on node 2.
    alice.sign_in(node1.url, alice_name, PASSWORD, shown_as="Alice", register=True)
    bob_browser.sign_in(node2.url, bob.username, bob.password, shown_as=bob.user["displayName"])

    # Alice starts a room with Bob by username; it opens for her and appears in Bob's list live.
    alice.type_into("[data-testid=new-room-with]", bob.username)
    alice.type_into("[data-testid=new-room-name]", room_name)
    alice.find("[data-testid=create-room]").click()
    alice.wait(lambda: alice.find("[data-testid=room-title]").text == room_name, "the new room is open")
    room_id = alice.wait(lambda: alice.find("[data-testid=room-view]").get_attribute("data-joined"), "alice joined the room")
    person = bob_browser.visible(f'[data-testid=person] [data-room-id="{room_id}"]', "the room appears under alice in bob's list")
    assert "Alice" in bob_browser.find("[data-testid=people]").text
    assert person.text.startswith(room_name)
    bob_browser.open_room(room_id)
    assert bob_browser.find("[data-testid=room-title]").text == room_name

    # Alice adds a note: it appears on Bob's canvas.
    alice.type_into("[data-testid=note-text]", "Hello from Alice <b>not bold</b>")
    alice.find("[data-testid=add-note]").click()
    note = alice.visible("[data-testid=element][data-type=note]", "alice's note is drawn")
    note_id = note.get_attribute("data-element-id")
    seen = bob_browser.element(note_id)
    bob_browser.wait(lambda: seen.find_element(By.CSS_SELECTOR, "[data-testid=element-body]").text
                     == "Hello from Alice <b>not bold</b>", "the note's text shows on bob's canvas, as text")
    start = bob_browser.position(note_id)
    assert alice.position(note_id) == start
    start_rect = _on_canvas(bob_browser, note_id)

    # Alice drags it (pointer down, a few moves, up): Bob sees it move to where she dropped it.
    alice_node = alice.element(note_id)
    (ActionChains(alice.driver, duration=50)
     .move_to_element(alice_node.find_element(By.CSS_SELECTOR, "[data-testid=element-body]"))
     .click_and_hold()
     .move_by_offset(60, 30).move_by_offset(60, 30).move_by_offset(60, 40).move_by_offset(60, 40)
     .release()
     .perform())
    alice.wait(lambda: not alice.driver.find_elements(By.CSS_SELECTOR, "[data-testid=element].dragging"), "alice's drag ended")
    dropped = alice.position(note_id)
    assert dropped == (start[0] + 240, start[1] + 140), (start, dropped)
    bob_browser.wait(lambda: bob_browser.position(note_id) == dropped, f"bob sees the note at {dropped}")
    # The page drew it moved by the same amount on Bob's canvas.
    bob_browser.wait(lambda: _moved_by(_on_canvas(bob_browser, note_id), start_rect, 240, 140),
                     f"the note moved by (240, 140) on bob's canvas (from {start_rect})")

    # Bob adds a note of his own: it goes on top, on both canvases.
    bob_browser.type_into("[data-testid=note-text]", "Bob was here")
    bob_browser.find("[data-testid=add-note]").click()
    bob_note = bob_browser.visible("[data-testid=element][data-type=note]:not([data-element-id='%s'])" % note_id, "bob's note is drawn")
    bob_note_id = bob_note.get_attribute("data-element-id")
    alice.element(bob_note_id)
    alice.wait(lambda: alice.z_index(bob_note_id) > alice.z_index(note_id), "bob's note is on top on alice's canvas")

    # Alice selects her note and brings it to front: Bob sees the new order.
    alice.element(note_id).find_element(By.CSS_SELECTOR, "[data-testid=element-body]").click()
    alice.wait(lambda: "selected" in alice.element(note_id).get_attribute("class"), "alice's note is selected")
    alice.find("[data-testid=bring-to-front]").click()
    bob_browser.wait(lambda: bob_browser.z_index(note_id) > bob_browser.z_index(bob_note_id),
                     "alice's note is on top on bob's canvas")
    assert int(bob_browser.element(note_id).value_of_css_property("z-index")) > \
        int(bob_browser.element(bob_note_id).value_of_css_property("z-index"))

    # Bob hearts Alice's note: both see one heart; only Bob's shows as his; Alice gets a notification.
    bob_browser.element(note_id).find_element(By.CSS_SELECTOR, "[data-testid=heart]").click()
    for browser, pressed in ((bob_browser, "true"), (alice, "false")):
        browser.wait(lambda: browser.element(note_id).find_element(By.CSS_SELECTOR, "[data-testid=heart-count]").text == "1"
                     and browser.element(note_id).find_element(By.CSS_SELECTOR, "[data-testid=heart]").get_attribute("aria-pressed") == pressed,
                     f"one heart, aria-pressed={pressed}")
    alice.wait(lambda: alice.find("[data-testid=notification-badge]").text == "1", "alice's badge shows the heart's notification")

    # Counts in the lists: two elements in the room, on both sides.
    for browser in (alice, bob_browser):
        browser.wait(lambda: browser.find(f'[data-testid=room-item][data-room-id="{room_id}"] [data-testid=room-count]').text
                     == "2 elements", "the room lists 2 elements")

    # The server agrees with what the pages show.
    response = api.request("GET", f"/api/rooms/{room_id}/elements", token=bob.token)
    elements = {element["id"]: element for element in response.json()["data"]}
    assert (elements[note_id]["positionX"], elements[note_id]["positionY"]) == dropped
    assert elements[note_id]["zIndex"] > elements[bob_note_id]["zIndex"]
    assert elements[note_id]["reactions"]["count"] == 1
    assert elements[note_id]["content"] == "Hello from Alice <b>not bold</b>"

    # Alice edits her note in place (double-click, type, Enter): Bob sees the new text.
    ActionChains(alice.driver).double_click(alice.element(note_id).find_element(By.CSS_SELECTOR, "[data-testid=element-body]")).perform()
    editor = alice.visible(f'#element-{note_id} [data-testid=element-body][contenteditable="plaintext-only"]', "the note is editable")
    editor.send_keys("Hello from Alice, edited" + Keys.ENTER)
    bob_browser.wait(lambda: bob_browser.element(note_id).find_element(By.CSS_SELECTOR, "[data-testid=element-body]").text
                     == "Hello from Alice, edited", "bob sees the edited text")

    # Counts and badges: a room Bob has not opened lists how many of its elements are new to him.
    login = api.request("POST", "/api/auth/login", json_body={"username": alice_name, "password": PASSWORD})
    alice_token = login.json()["data"]["token"]
    second = api.request("POST", "/api/rooms", token=alice_token,
                         json_body={"otherUserId": bob.id, "name": f"Second {suffix}"}).json()["data"]
    for index in range(3):
        created = api.request("POST", f"/api/rooms/{second['id']}/elements", token=alice_token, json_body={
            "type": "note", "positionX": 40 + 60 * index, "positionY": 40, "width": 160, "height": 100, "content": f"n{index}"})
        assert created.status_code == 201, created.text
    badge = f'[data-testid=room-item][data-room-id="{second["id"]}"] [data-testid=room-badge]'
    bob_browser.wait(lambda: bob_browser.visible(badge).text == "3", "bob's list shows 3 unseen in the second room")
    assert bob_browser.find(f'[data-testid=room-item][data-room-id="{second["id"]}"] [data-testid=room-count]').text == "3 elements"

    path = os.path.join(artifact_directory(), "console-canvas.png")
    bob_browser.find("[data-testid=viewport]").screenshot(path)
    for browser in (alice, bob_browser):
        browser.driver.save_screenshot(os.path.join(artifact_directory(), f"console-{browser.name}.png"))
    print(f"\nconsole canvas screenshot: {path}")
    assert os.path.getsize(path) > 0

    for browser in (alice, bob_browser):
        assert browser.severe_console_entries() == [], f"{browser.name}'s console logged errors"


def _on_canvas(browser, element_id):
    """Where the page draws the element on the canvas (its computed `left`/`top`): unlike its
    on-screen box, not caught mid-way through the note's entrance animation."""
    node = browser.element(element_id)
    return {"x": float(node.value_of_css_property("left").removesuffix("px")),
            "y": float(node.value_of_css_property("top").removesuffix("px"))}


def _moved_by(rect, before, dx, dy):
    return abs(rect["x"] - before["x"] - dx) <= 1 and abs(rect["y"] - before["y"] - dy) <= 1
