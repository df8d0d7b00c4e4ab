# ruff: noqa: E501  (prose: one passage per line reads and diffs best)
"""A fresh, blind labelled test set for the search of screvi-mcp.

Ninety invented highlights over twelve subjects (woodworking, birdwatching,
chess, negotiation, sleep, tea, typography, photography, git, mountaineering,
sourdough bread in French, a vegetable garden in Spanish), with queries of
known kinds and negative queries that no passage answers.

It was written blind on 2026-11-25 by someone who had not seen the project's
labelled set, its search rules or its parameters. It exists only as an
independent check: NOTHING may ever be fitted on it (no tuning of weights,
thresholds, synonyms or rules against these queries). If a parameter is ever
chosen by looking at results on this set, the set stops being an independent
check and must be replaced by a new blind one.

All prose is original, except one public-domain quotation (Seneca, in
R. M. Gummere's 1917 translation) and a few traditional sayings. Sources and
people are invented.

Labels its writer was unsure of (left as written, before any search was run):
"gain height during the day but spend the night lower down" lists mt02 second, which
limits how fast the sleeping altitude rises rather than saying "sleep lower"; "when do the
majority of mishaps occur on a peak climb" leaves out mt08 (a cause of abseiling accidents,
not a time); "avoid blurry snaps from shaky fingers without a tripod" leaves out ph02 (too
general); three note queries ("tarrasch's rule", "billing repo reset accident", "how long
does bottled hide glue keep before it goes off") are only partly answered by the note alone.
"""

from __future__ import annotations

# fmt: off
FRESH_SOURCES: list[tuple[str, str, str, str | None]] = [
    # (key, name, type, author)   type is one of: book, article, podcast, video, tweet, self
    ("ww_bench", "The Patient Bench", "book", "Harriet Quillon"),
    ("ww_pod", "Shavings Hour", "podcast", "Tomas Vardell"),
    ("bird_book", "Marsh and Margin: A Year of Birding", "book", "Elspeth Corrow"),
    ("bird_art", "Listening Before Looking", "article", "Ansel Pruitt"),
    ("bird_nl", "Vogels kijken in de polder", "article", "Jelle Brouwershaven"),
    ("chess_book", "Endgames for the Impatient", "book", "Viktor Haldane"),
    ("chess_de", "Schach ohne Angst", "book", "Greta Wollenhaupt"),
    ("neg_book", "The Second Offer", "book", "Marisol Ebrahimi-Kent"),
    ("neg_pod", "Table Talk: Deals and Disputes", "podcast", "Odile Fenwick"),
    ("my_notes", "My notes", "self", None),
    ("sleep_art", "Why the 3 a.m. Wake-Up Isn't Insomnia", "article", "Priya Castellane"),
    ("sleep_book", "The Night Shift Within", "book", "Lorcan Bheag"),
    ("seneca", "Moral Letters to Lucilius", "book", "Seneca"),
    ("tea_book", "Leaf, Water, Time", "book", "Yun Halvorsen"),
    ("typo_book", "The Quiet Page", "book", "Edwin Marchbanks"),
    ("typo_vid", "Kerning in Five Minutes", "video", "Studio Fennick"),
    ("photo_book", "Seeing in Stops", "book", "Ruth Okonjo-Lindqvist"),
    ("photo_vid", "Street Light After Dark", "video", "Kasimir Delacroix-Ybarra"),
    ("git_art", "Rewriting History Safely", "article", "Ingrid Tallow"),
    ("git_tw", "Thread on everyday git habits", "tweet", "Noor Abernethy"),
    ("mtn_book", "Thin Air, Slow Feet", "book", "Caspar Ruthven"),
    ("mtn_it", "Il rifugio sotto la Cresta Vedrana", "book", "Lucia Benedetti-Sarn"),
    ("mtn_de", "Bergsteigen mit Verstand", "article", "Florian Aigner-Moos"),
    ("pain_fr", "Le Levain patient", "book", "Amélie Thouvenot"),
    ("huerto_es", "El huerto de la abuela Remedios", "book", "Joaquín Albarrán Soto"),
]

FRESH_PASSAGES: list[tuple[str, str | None, str, str | None, tuple[str, ...]]] = [
    # (key, source key or None, content, note or None, tags)
    # --- woodworking ---
    ("ww01", "ww_bench", "A blade is sharp when the two faces meet at a line so fine it reflects no light; if you can see a bright glint along the edge under a lamp, you are not done honing.", None, ("sharpening",)),
    ("ww02", "ww_bench", "Hone the back of a new chisel flat on the coarsest stone before you ever touch the bevel. Nobody enjoys this hour, and every later hour depends on it.", None, ("sharpening", "chisels")),
    ("ww03", "ww_bench", "Sharp tools are safe tools.", None, ("safety",)),
    ("ww04", "ww_pod", "Hide glue gives you a long open time and it can be reversed with heat and moisture, which is why restorers still reach for it; PVA sets faster but is basically permanent.", "Tomas says liquid hide glue in a bottle goes off after about a year, so write the date on the cap when you open it.", ("glue", "restoration")),
    ("ww05", "ww_bench", "Every board you bring into the shop is still, in a sense, alive to the weather. Wood hardly shrinks or swells along its length (a metre-long board might change by less than a millimetre from winter to summer) but across its width the story is different. A flat-sawn oak board thirty centimetres wide can move five or six millimetres between a damp August and a centrally heated January, and no glue, screw or clever joint will stop it. The only question is where that movement goes. If you fix a solid top rigidly to its apron, the top will win the argument: it will split along a glue line, pull a screw through its hole, or cup until the table rocks. Old furniture is full of these scars, and once you learn to see them you find them everywhere, in antique shops and in your grandmother's sideboard. The traditional answer is to let the top float. Breadboard ends are glued or pinned only at the centre, and pinned through elongated holes towards the edges. Drawer bottoms sit in grooves without glue, with the grain running side to side so that they expand towards the back rather than jamming against the sides. Panels in frame-and-panel doors are left loose in their grooves and get a coat of finish before assembly, so that a bare stripe does not appear at the edge when they shrink in winter. For tabletops, the neatest solution is the wooden button: a small block with a tongue on one end that sits in a groove cut into the inside face of the apron, screwed to the underside of the top. Along the ends of the table, where the top slides along the apron rather than towards it, the buttons simply travel in their groove and need no clearance. Along the long sides, where the top moves towards and away from the apron, leave a gap of about three millimetres between the shoulder of each button and the apron, so that the top can shrink in winter without pulling the button tight against the wood.", None, ("wood movement", "tables", "furniture design")),
    ("ww06", "ww_pod", "Dovetails were never only about strength. A drawer front gets yanked thousands of times, and the tails lock against exactly that pull, so the joint only has to resist one direction well.", None, ("joinery",)),
    ("ww07", None, "Measure twice, cut once.", None, ("proverb",)),
    ("ww08", "ww_pod", "Let lumber sit in your shop for a couple of weeks before you mill it, stickered so air reaches every face, or it will move after you've cut your joints.", None, ("wood movement", "acclimation")),
    # --- birdwatching ---
    ("bd01", "bird_art", "Learn the calls of the twenty commonest birds in your neighbourhood first. Once those fade into background noise, anything unfamiliar jumps out, and that is how you find the rarities.", None, ("birding by ear",)),
    ("bd02", "bird_art", "A warbler's song is its name tag, but its alarm call is closer to a public notice: other species react to it too, so a sudden chorus of chips often means a hawk or a cat nearby.", None, ("alarm calls", "predators")),
    ("bd03", "bird_book", "For woodland birding choose 8x42 binoculars: the wider field of view helps you find a bird moving through branches, and the 42 mm objective lenses gather enough light at dusk. Keep the 10x pair for open water.", None, ("binoculars", "gear")),
    ("bd04", "bird_book", "We reached Hollin Fen a little before five, when the reeds were still grey and the only sound was the wind moving through them like somebody turning pages. I had come for the bittern, which I had heard on three earlier visits and never once seen. Bitterns are the great frustration of marsh birding: a bird the size of a small heron, striped like dead reeds, which when alarmed points its bill at the sky and sways with the stems until it simply is not there. The old wardens say you do not find a bittern, you wait until it decides to be found. So we waited. A marsh harrier quartered the far side of the fen, low and slow, tipping on its long wings, and every duck on the open water went up in a clatter. Reed warblers started their scratchy conversation, which sounds like someone tuning a radio that will never quite find the station. A water rail squealed from somewhere invisible, a noise so much like a piglet being teased that my companion laughed out loud and a grey heron lifted off in disgust. The light came up pink and then ordinary. By seven we had the usual list: the harrier, two great crested grebes doing their head-shaking dance, a kingfisher that went past like a blue spark, and a cuckoo calling from the alder carr on the western edge. I was writing the list up in my notebook, half resigned to another blank, when the boom came: a low, hollow note, like somebody blowing across the top of an enormous bottle. It boomed three times, paused, and then, as if to apologise for all the years of hiding, the bird walked out onto the muddy margin beside the broken sluice gate at the north end of the fen and stood there in plain view for four full minutes before stepping back into the reeds.", None, ("bittern", "wetlands", "trip report")),
    ("bd05", "bird_book", "Write down what you saw before you open the field guide. The book will otherwise quietly edit your memory until the bird matches the picture.", "Same trick as for eyewitnesses of car accidents: write the account before anyone shows you a photo. See the podcast episode on memory.", ("field notes",)),
    ("bd06", "bird_nl", "Grutto's keren al in maart terug uit West-Afrika; wie ze in de polder wil zien, moet vroeg in het voorjaar gaan, voordat het gras gemaaid wordt.", None, ("migration", "weidevogels")),
    ("bd07", "bird_art", "Don't use playback in the breeding season. Every time a male hears a rival from a speaker he abandons feeding to defend the territory, and a nest can go hungry for the sake of a photo.", None, ("ethics",)),
    ("bd08", "bird_book", "In late summer male ducks moult into eclipse plumage and for several weeks look almost like the females; the colour of the bill is often the only reliable clue.", None, ("ducks", "identification")),
    # --- chess ---
    ("ch01", "chess_book", "In a king and pawn ending, the side whose king reaches the key squares in front of the pawn wins, regardless of whose move it is. Count the squares, not the moves.", None, ("endgame",)),
    ("ch02", "chess_book", "Opposition is only a tool for reaching the key squares; players who memorise it as a goal in itself go wrong the moment a second pawn appears.", None, ("endgame",)),
    ("ch03", "chess_book", "The rook belongs behind the passed pawn, yours or your opponent's. From there its scope grows with every step the pawn takes.", "Tarrasch's rule, Haldane says, though he found three exceptions in his own games.", ("endgame", "rook endings")),
    ("ch04", None, "Knights on the rim are dim.", None, ("chess proverb",)),
    ("ch05", "chess_de", "Wer in Zeitnot gerät, hat meistens nicht zu langsam gerechnet, sondern zu früh gezweifelt: Man prüft dieselbe Variante dreimal, statt sich einmal zu entscheiden.", None, ("time management",)),
    ("ch06", "chess_book", "After every game, won or lost, I write three sentences: what I planned, what my opponent wanted, and where I could first have noticed it.", None, ("training", "analysis")),
    ("ch07", "chess_book", "Before every move, ask what your opponent's last move threatens. Most blunders at club level are not miscalculations but questions nobody asked.", None, ("blunders", "tactics")),
    ("ch08", "chess_book", "In the opening, a pawn move is a promise you cannot take back: pieces can retreat, pawns cannot.", None, ("opening",)),
    # --- negotiation ---
    ("ng01", "neg_book", "The first number spoken anchors the whole conversation. If you open, open high enough that your real target looks like a concession.", None, ("anchoring",)),
    ("ng02", "neg_book", "Know your walk-away point before you sit down, and write it on paper. A limit you only hold in your head moves every time the other side smiles.", None, ("BATNA", "preparation")),
    ("ng03", "neg_pod", "After you make an offer, stop talking. The silence feels like pressure on you, but it is working on them.", None, ("tactics",)),
    ("ng04", "neg_pod", "Instead of a flat no, ask 'How am I supposed to do that?' It hands the problem back to the other side without closing the door.", None, ("calibrated questions", "tactics")),
    ("ng05", "neg_book", "Trade concessions, never give them. Fenella Achterberg, who ran purchasing at the mill for thirty years, put it this way: every time you move, ask for something back, even something small, or you teach the other side that pushing works.", None, ("concessions",)),
    ("ng06", "neg_pod", "In salary talks, negotiate the start date, the title and the review date along with the money: a recruiter who has no room on base pay often has plenty on everything else.", "Used this in March: no extra salary, but I came away with a fourth week of paid leave and a company laptop.", ("salary", "career")),
    ("ng07", "neg_book", "Say the other side's position back to them better than they said it. People stop defending a point once they feel it has been heard.", None, ("listening", "empathy")),
    ("ng08", "my_notes", "Car purchase, lesson learned: 'let me check with my manager' was pure theatre. The manager was never going to refuse a deal that was already on the table.", None, ("cars", "tactics")),
    # --- sleep ---
    ("sl01", "sleep_art", "Before electric light, many people slept in two blocks with an hour or so awake in between, and diaries from the time mention it as casually as dinner. Waking at 3 a.m. may be less a disorder than an old habit resurfacing.", None, ("segmented sleep", "history")),
    ("sl02", "sleep_book", "If you have been lying awake for what feels like twenty minutes, get up, go to another room with dim light and do something dull until you feel sleepy. The bed should be a place where you sleep, not where you struggle.", None, ("insomnia", "CBT-I")),
    ("sl03", "sleep_book", "Caffeine has a half-life of around five to six hours, so a coffee at four in the afternoon is still half-present at ten at night.", None, ("caffeine",)),
    ("sl04", "sleep_book", "Morning daylight sets the clock more than evening darkness does: ten minutes outside soon after waking moves sleepiness earlier that night.", None, ("circadian rhythm", "light")),
    ("sl05", "seneca", "There are more things, Lucilius, likely to frighten us than there are to crush us; we suffer more often in imagination than in reality.", "Read this at 3 a.m. and it helped more than the breathing app did.", ("stoicism", "anxiety")),
    ("sl06", "sleep_book", "An afternoon nap should stay under twenty minutes; go longer and you slide into deep sleep and wake up groggier than before.", None, ("naps",)),
    ("sl07", "sleep_book", "Flying east is harder than flying west, because the body has to fall asleep earlier than it wants to, and staying up late is easier than going to bed early. The trick is to start before you leave: move bedtime and wake-up an hour earlier each day for three days before departure, and get bright light as soon as you wake.", None, ("jet lag", "travel")),
    ("sl08", "sleep_art", "A cool bedroom helps: core body temperature has to fall for sleep to begin, and a heavy duvet in a warm room works against it.", None, ("bedroom", "thermoregulation")),
    # --- tea ---
    ("te01", "tea_book", "Green tea turns bitter when the water is too hot. Let the kettle rest for a few minutes off the boil, to around 75–80 °C, and the same leaves taste sweet and grassy.", None, ("green tea", "brewing")),
    ("te02", "tea_book", "Black tea wants water at a full rolling boil; anything cooler leaves the cup flat and thin.", None, ("black tea", "brewing")),
    ("te03", "tea_book", "Gongfu brewing means many short infusions in a small pot: a high ratio of leaf to water, ten to twenty seconds for the first steep, a little longer each time after.", None, ("oolong", "gongfu cha")),
    ("te04", "tea_book", "Let the leaf open slowly.", None, ("patience",)),
    ("te05", "tea_book", "Store tea away from light, air, moisture and strong smells; a spice cupboard is the worst place in the kitchen for it.", "Moved the tins away from the cumin. Yun makes one exception: unopened pu-erh cakes want a little airflow so they keep ageing.", ("storage",)),
    ("te06", "tea_book", "Tea reached the English court with Catherine of Braganza, who brought the habit from Portugal when she married Charles II in 1662; before that it was sold mostly by apothecaries.", None, ("history",)),
    ("te07", "tea_book", "Matcha is whisked, not stirred: a quick W-shaped motion with a bamboo chasen until a fine foam covers the surface.", None, ("matcha", "japanese tea")),
    # --- typography ---
    ("ty01", "typo_book", "A comfortable line of body text holds somewhere between 45 and 75 characters; much longer and the eye loses its place on the return sweep.", None, ("measure", "readability")),
    ("ty02", "typo_book", "Leading for body text usually falls between 120 and 145 percent of the type size: more for long lines, less for headings.", None, ("leading",)),
    ("ty03", "typo_vid", "Kern the pairs that look wrong, not the pairs a table says are wrong: AV, To and LT at display sizes, and almost never anything in running text.", None, ("kerning",)),
    ("ty04", "typo_book", "Whitespace is not empty.", None, ("layout",)),
    ("ty05", "typo_book", "Use true small caps for acronyms in running text; scaled-down capitals look thin and pale next to the lowercase.", None, ("small caps",)),
    ("ty06", "typo_book", "Hanging punctuation lets quotation marks sit in the margin, so the left edge of the text block looks straight to the eye, even if it is not straight to the ruler.", None, ("optical alignment",)),
    ("ty07", "typo_book", "Write dates as 2026-03-14: the ISO 8601 order sorts correctly as plain text, and nobody has to guess whether 03/04 means March or April.", None, ("dates", "standards")),
    # --- photography ---
    ("ph01", "photo_book", "At f/2.8 on a 50 mm lens, two metres from your subject, the zone of sharp focus is only a few centimetres deep: enough for the eyes, not for the nose and the ears at once.", None, ("depth of field", "aperture")),
    ("ph02", "photo_book", "The exposure triangle is a teaching aid, not a law: shutter speed decides motion, aperture decides depth, and ISO merely decides how much you amplify the light you caught.", None, ("exposure",)),
    ("ph03", "photo_book", "Handheld, keep the shutter at least as fast as one over the focal length, 1/50 s for a 50 mm lens, and double it if you had coffee.", None, ("camera shake",)),
    ("ph04", "photo_vid", "Expose for the highlights at night. Neon signs and shop windows clip first, and blown highlights are gone for good, while shadows can be lifted later.", None, ("night photography", "street")),
    ("ph05", "photo_book", "Light is the subject.", None, ("light",)),
    ("ph06", "photo_vid", "Ask before you photograph someone's child. Adults in a crowd are part of the street; a child is someone's whole world.", None, ("ethics", "street")),
    ("ph07", "photo_book", "The ridge above the lake at Skarvik is the kind of place that makes you think photography is easy. You arrive in the blue hour, the water is still, the mountains on the far side stack up in fading layers, and everything in the viewfinder looks like a postcard. Then you look at the back of the camera and the postcard is broken. The sky is a white sheet with no trace of the colour you can see with your own eyes, or the foreground is a black silhouette with the lake reduced to a pale smear. The eye adapts constantly as it moves across a scene; the sensor gets one exposure for the whole frame, and at dawn the difference between sky and land can be five stops or more. I tried everything that morning. I changed lenses twice, walked fifty metres along the ridge looking for a composition that hid the brightest part of the sky, and drank a whole flask of coffee without noticing. I bracketed, meaning to blend the frames later, but a breeze came up and the reeds at the water's edge were in a different place in every shot, which makes blending a nightmare. I tried exposing for the sky and lifting the shadows, and the foreground turned into mottled noise. I tried exposing for the land and pulling the highlights down, and the sky came back as a flat, sickly beige. I even tried waiting for the sun to clear the mountains, which only made the contrast worse and the light harsher. What I should have done, and what the old landscape photographers did on film without any fuss, was to control the light before it ever reached the sensor. The fix, in the end, was a three-stop soft-edged graduated neutral density filter, slid down in its holder until the transition sat just on the ridge line, and then tilted a few degrees to follow the slope of the mountain.", None, ("landscape", "dynamic range", "trip report")),
    ("ph08", "photo_vid", "Back-button focus separates focusing from the shutter release, so you can lock focus once and keep shooting as people walk through the frame.", None, ("autofocus",)),
    # --- git ---
    ("gt01", "git_art", "`git rebase --onto main feature-a feature-b` replays only the commits that are on feature-b but not on feature-a, onto main. It is the way out when you branched from a branch that has since been squashed.", None, ("rebase",)),
    ("gt02", "git_art", "Prefer `git push --force-with-lease` over `--force`: it refuses to overwrite the remote if someone else pushed since you last fetched.", None, ("force push", "collaboration")),
    ("gt03", "git_art", "`git reflog` remembers where HEAD has been for about ninety days by default, so a branch you deleted or a reset you regret is usually still recoverable.", "Saved me after the bad `reset --hard` on the billing repo in June.", ("recovery",)),
    ("gt04", "git_tw", "Commit early, commit often.", None, ("habits",)),
    ("gt05", "git_art", "`git bisect` performs a binary search over history: mark one good commit and one bad one, and it checks out the midpoint until the commit that introduced the bug is found, in about log2(n) steps.", None, ("debugging",)),
    ("gt06", "git_tw", "A commit message should say why, not what. The diff already says what.", None, ("commit messages",)),
    ("gt07", "git_art", "In an interactive rebase, `fixup` folds a commit into the one above it and throws its message away; `squash` does the same but lets you edit the combined message.", None, ("rebase", "history cleanup")),
    ("gt08", "git_art", "`git worktree add ../hotfix main` gives you a second working directory on another branch, so you can patch production without stashing half-finished work.", None, ("worktree",)),
    # --- mountaineering ---
    ("mt01", "mtn_book", "Climb high, sleep low.", None, ("acclimatization", "altitude")),
    ("mt02", "mtn_book", "Above about 3,000 metres, don't raise your sleeping altitude by more than 300 to 500 metres a day, and take a rest day every three or four days.", None, ("acclimatization", "altitude")),
    ("mt03", "mtn_book", "A headache that doesn't go away with water and ibuprofen, plus clumsiness when you try to walk heel to toe, is not tiredness. It is the brain swelling, and the only cure is down.", None, ("HACE", "cerebral edema")),
    ("mt04", "mtn_it", "Al rifugio la regola è una sola: si parte col buio e si rientra prima che il sole scaldi la neve, perché nel pomeriggio i ponti di neve sui crepacci cedono.", None, ("alpine start", "glaciers")),
    ("mt05", "mtn_book", "The summit is optional; the descent is mandatory. Most accidents happen on the way down, when attention has already gone home.", None, ("safety", "descent")),
    ("mt06", "mtn_book", "We turned around at half past eleven, two hundred metres below the summit, and I still think it was the best decision of the trip. The snow on the upper slope had gone from crisp to sugary in less than an hour, and every step sank past the ankle. Giulio said nothing for a long time, which is how he disagrees. We had come up the normal route from the Capanna Sorvella, a tin-roofed hut with twelve bunks, a stove that smokes whenever the wind is from the south, and a logbook going back to 1931 in which every party writes its names, its route and the weather. On the way up we had read entries from people who turned back at the same rock band, and entries from people who didn't, and one from a guide in 1958 who simply wrote 'troppo caldo' and underlined it twice. The descent was slow. Neither of us talked much; the only sounds were the crunch of our boots and, now and then, a slab of wet snow sliding off a rock somewhere below us. We roped up again on the glacier and moved one at a time across the snow bridges, probing with the axe, while the sun worked on everything around us. At the bergschrund Giulio lowered me first and I belayed him down, and somewhere around there the light started to go, much earlier than we had planned, because cloud had come in from the west. That was when we found out that my headlamp was nearly dead. We had carried spare batteries all the way to the hut for exactly this situation, and we had, with great care, left them behind. They were still at the hut, in the tin box under the logbook shelf, wrapped in one of Giulio's socks, where I had put them the night before so that they would stay warm.", None, ("descent", "trip report", "huts")),
    ("mt07", "mtn_book", "Cotton kills: once wet with sweat it stays wet, and on a windy ridge that means losing heat faster than you can make it. Wear wool or synthetics next to the skin.", None, ("clothing", "hypothermia")),
    ("mt08", "mtn_de", "Beim Abseilen gehören Knoten in beide Seilenden. Die meisten tödlichen Abseilunfälle passieren, weil ein Seilende unbemerkt durch das Abseilgerät rutscht.", None, ("rappelling", "safety")),
    # --- sourdough bread (French) ---
    ("pf01", "pain_fr", "Un levain est prêt quand il a doublé de volume et qu'une cuillerée déposée dans un verre d'eau flotte ; s'il coule, attendez encore une heure.", None, ("levain", "sourdough")),
    ("pf02", "pain_fr", "Nourrissez votre levain deux fois par jour s'il vit à température ambiante ; au réfrigérateur, un rafraîchi par semaine suffit.", None, ("levain", "feeding")),
    ("pf03", "pain_fr", "L'autolyse, c'est mélanger seulement la farine et l'eau, puis laisser reposer de trente minutes à une heure avant d'ajouter le sel et le levain : le gluten commence à se former tout seul.", None, ("autolyse", "technique")),
    ("pf04", "pain_fr", "Le levain n'aime pas la hâte.", None, ("patience",)),
    ("pf05", "pain_fr", "Une pâte très hydratée, à 80 % ou plus, ne se pétrit pas : on la travaille par rabats successifs, quatre séries espacées d'une demi-heure.", None, ("hydration", "stretch and fold")),
    ("pf06", "pain_fr", "Pour une croûte épaisse et brillante, cuisez le pain dans une cocotte en fonte fermée pendant vingt minutes, puis retirez le couvercle : la vapeur emprisonnée fait le travail d'un four de boulanger.", "Essayé samedi : 250 °C avec le couvercle, 230 °C sans. Parfait.", ("baking", "crust")),
    # --- vegetable garden (Spanish) ---
    ("hu01", "huerto_es", "Los tomates se riegan al pie y por la mañana; mojar las hojas al atardecer es invitar al mildiu.", None, ("riego", "tomates")),
    ("hu02", "huerto_es", "Plantar albahaca entre las tomateras espanta a la mosca blanca, o eso decía mi abuela, y nunca me he atrevido a comprobarlo.", None, ("asociación de cultivos",)),
    ("hu03", "huerto_es", "La rotación es sencilla: donde este año hubo legumbres, el año que viene van las hortalizas de hoja, luego las de fruto y al final las de raíz.", None, ("rotación",)),
    ("hu04", "huerto_es", "Sin prisa, pero sin pausa.", None, ("paciencia",)),
    ("hu05", "huerto_es", "El compost está listo cuando huele a bosque y ya no reconoces lo que echaste; si huele a podrido le falta aire, y si no se calienta le falta agua o restos verdes.", None, ("compost",)),
    ("hu06", "huerto_es", "En la meseta no se planta nada delicado antes de San Isidro, el quince de mayo: las heladas tardías castigan a los impacientes.", None, ("heladas", "calendario")),
]

FRESH_QUERIES: list[tuple[str, str, tuple[str, ...]]] = [
    # (query text, kind, relevant passage keys: the FIRST is the best answer; list EVERY passage that answers it)
    # --- paraphrase: no content word in common with the answer ---
    ("how do I check whether my plane iron is fully keen", "paraphrase", ("ww01",)),
    ("did preindustrial folk have a split night's rest", "paraphrase", ("sl01",)),
    ("why the initial price mentioned in a haggle matters so much", "paraphrase", ("ng01",)),
    ("why is my sencha so harsh and astringent", "paraphrase", ("te01",)),
    ("how many letters should fit across a column of prose", "paraphrase", ("ty01",)),
    ("avoid blurry snaps from shaky fingers without a tripod", "paraphrase", ("ph03",)),
    ("locate the revision that first broke things by repeatedly splitting the range", "paraphrase", ("gt05",)),
    ("get back commits I threw away by accident", "paraphrase", ("gt03",)),
    ("when do the majority of mishaps occur on a peak climb", "paraphrase", ("mt05",)),
    ("what fabric should I avoid for base layers in the hills", "paraphrase", ("mt07",)),
    ("jot your observations first, consult the reference later", "paraphrase", ("bd05",)),
    ("is it harmful to lure songbirds with recordings in spring", "paraphrase", ("bd07",)),
    ("employer won't raise wages, what other perks can I bargain for when hired", "paraphrase", ("ng06",)),
    ("summarise the opponent's stance to lower their guard", "paraphrase", ("ng07",)),
    ("should timber acclimatise indoors before I plane it", "paraphrase", ("ww08",)),
    # --- exact terms / identifiers ---
    ("git rebase --onto", "exact", ("gt01",)),
    ("--force-with-lease", "exact", ("gt02",)),
    ("ISO 8601", "exact", ("ty07",)),
    ("f/2.8", "exact", ("ph01",)),
    ("8x42 binoculars", "exact", ("bd03",)),
    # --- rare invented names ---
    ("hollin fen", "name", ("bd04",)),
    ("sorvella", "name", ("mt06",)),
    ("achterberg", "name", ("ng05",)),
    ("brouwershaven", "name", ("bd06",)),
    ("skarvik", "name", ("ph07",)),
    # --- author or source title plus topic ---
    ("what does viktor haldane say about rook endgames", "source", ("ch03",)),
    ("yun halvorsen on storing tea", "source", ("te05",)),
    ("ingrid tallow on force pushing", "source", ("gt02",)),
    ("what does seneca say about fear", "source", ("sl05",)),
    ("studio fennick kerning tips", "source", ("ty03",)),
    # --- mixed: some shared words, some paraphrase ---
    ("why dovetails suit drawers", "mixed", ("ww06",)),
    ("small caps for acronyms instead of shrunk capitals", "mixed", ("ty05",)),
    ("how to froth matcha properly", "mixed", ("te07",)),
    ("afternoon coffee keeps me awake at night", "mixed", ("sl03",)),
    ("exposing neon street scenes after dark", "mixed", ("ph04",)),
    # --- note: the answer is only in the reader's note ---
    ("how long does bottled hide glue keep before it goes off", "note", ("ww04",)),
    ("pu-erh storage exception", "note", ("te05",)),
    ("did I manage to get extra holiday out of a job offer", "note", ("ng06",)),
    ("billing repo reset accident", "note", ("gt03",)),
    ("tarrasch's rule", "note", ("ch03",)),
    # --- tag: the tag is on the answer, the word is not in its text ---
    ("stoicism", "tag", ("sl05",)),
    ("batna", "tag", ("ng02",)),
    ("optical alignment", "tag", ("ty06",)),
    ("cerebral edema", "tag", ("mt03",)),
    ("cbt-i", "tag", ("sl02",)),
    # --- crosslang: query and answer in different languages ---
    ("how can I tell my sourdough starter is ready to use", "crosslang", ("pf01",)),
    ("my compost smells rotten, what is wrong", "crosslang", ("hu05",)),
    ("should I tie knots in the rope ends when rappelling", "crosslang", ("mt08",)),
    ("when do black-tailed godwits come back from africa", "crosslang", ("bd06",)),
    ("à quelle température infuser le thé vert", "crosslang", ("te01",)),
    ("gelöschten Branch in Git wiederherstellen", "crosslang", ("gt03",)),
    ("¿cuántas horas dura el efecto de la cafeína?", "crosslang", ("sl03",)),
    # --- non_english: query and answer in the same non-English language ---
    ("combien de fois nourrir le levain au frigo", "non_english", ("pf02",)),
    ("comment avoir une croûte croustillante à la maison", "non_english", ("pf06",)),
    ("qué sembrar después de las legumbres", "non_english", ("hu03",)),
    ("warum komme ich ständig in Zeitnot", "non_english", ("ch05",)),
    ("perché rientrare presto dal ghiacciaio", "non_english", ("mt04",)),
    # --- short: the answer is a very short passage, paraphrased ---
    ("blunt chisels cause more injuries", "short", ("ww03",)),
    ("a horse at the board's edge is a weak piece", "short", ("ch04",)),
    ("gain height during the day but spend the night lower down", "short", ("mt01", "mt02")),
    ("blank areas on a page are doing work too", "short", ("ty04",)),
    ("save your changes to version control frequently", "short", ("gt04",)),
    # --- long: the answer is a detail near the end of a very long passage ---
    ("how much gap to leave at tabletop buttons on the long sides", "long", ("ww05",)),
    ("where did the bittern finally come out into the open", "long", ("bd04",)),
    ("which filter balanced the bright sky at dawn over the ridge", "long", ("ph07",)),
    ("where were the spare headlamp batteries left", "long", ("mt06",)),
    # --- hard: the answer sits among near-topic siblings that do not answer it ---
    ("what to flatten first on a brand-new chisel", "hard", ("ww02",)),
    ("what does a sudden burst of chipping from small birds mean", "hard", ("bd02",)),
    ("water temperature for black tea", "hard", ("te02",)),
    ("how much space between lines of body text", "hard", ("ty02",)),
    ("difference between fixup and squash in interactive rebase", "hard", ("gt07",)),
    ("how long should a nap be", "hard", ("sl06",)),
]

FRESH_NEGATIVES: list[tuple[str, str]] = [
    # (query text, negative kind) — queries that NO passage in FRESH_PASSAGES answers
    # --- off_topic: far from every subject ---
    ("how to file taxes as a freelancer", "off_topic"),
    ("treating a dog's ear infection", "off_topic"),
    ("what does lbw mean in cricket", "off_topic"),
    ("how to bleed a radiator", "off_topic"),
    ("symptoms of vitamin d deficiency", "off_topic"),
    ("history of the roman aqueducts", "off_topic"),
    ("how does a mortgage offset account work", "off_topic"),
    ("knitting a cable stitch pattern", "off_topic"),
    # --- near_topic: next to a covered subject, not answered ---
    ("what finish to use on a wooden cutting board", "near_topic"),
    ("how to cut a mortise and tenon joint", "near_topic"),
    ("how to attract birds to a garden feeder", "near_topic"),
    ("best opening against the sicilian defence", "near_topic"),
    ("how to negotiate over email instead of face to face", "near_topic"),
    ("is it safe to take melatonin every night", "near_topic"),
    ("how to stop snoring", "near_topic"),
    ("how to brew kombucha at home", "near_topic"),
    ("serif or sans serif for body text", "near_topic"),
    ("how to clean a camera sensor", "near_topic"),
    ("how to resolve a merge conflict in git", "near_topic"),
    ("how to use an avalanche transceiver", "near_topic"),
    # --- near_crosslang: near a subject, in another language, not answered ---
    ("peut-on congeler le pain au levain", "near_crosslang"),
    ("cómo quitar los chupones de las tomateras", "near_crosslang"),
    ("when to harvest potatoes", "near_crosslang"),
    ("Wie spielt man gegen die Französische Verteidigung", "near_crosslang"),
    ("Welche Steigeisen eignen sich für Gletschertouren", "near_crosslang"),
    ("come pulire l'obiettivo della fotocamera", "near_crosslang"),
    ("cómo preparar mate con bombilla", "near_crosslang"),
    ("quantas horas de sono um adolescente precisa", "near_crosslang"),
]
# fmt: on
