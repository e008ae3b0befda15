/**
 * Word lists and domain facts for the synthetic catalog. Places come from the city-timezones data set;
 * names are assembled from these lists, so they read like a catalog without naming real acts.
 */

/** Splits a space-separated word list: keeps long lists compact in source. */
const words = (list: string): readonly string[] => list.split(" ");

export type VenueKind = "club" | "theater" | "hall" | "arena" | "stadium" | "festival";

/** How common each kind is, its match radius in metres (by size), and how many events it hosts. */
export const VENUE_KINDS: readonly {
  kind: VenueKind;
  share: number;
  radius: [number, number];
  eventRate: number;
}[] = [
  { kind: "club", share: 35, radius: [80, 120], eventRate: 1.6 },
  { kind: "theater", share: 20, radius: [100, 180], eventRate: 1.1 },
  { kind: "hall", share: 15, radius: [150, 250], eventRate: 1 },
  { kind: "arena", share: 15, radius: [250, 400], eventRate: 1 },
  { kind: "stadium", share: 10, radius: [450, 650], eventRate: 0.6 },
  { kind: "festival", share: 5, radius: [1500, 5000], eventRate: 0.08 },
];

/** Music genres with their share of acts, and the venue kinds that book them most. */
export const GENRES: readonly { genre: string; share: number; venues: readonly VenueKind[] }[] = [
  { genre: "rock", share: 14, venues: ["club", "hall", "arena", "stadium"] },
  { genre: "pop", share: 14, venues: ["hall", "arena", "stadium"] },
  { genre: "hip-hop", share: 10, venues: ["club", "hall", "arena"] },
  { genre: "electronic", share: 10, venues: ["club", "hall", "arena"] },
  { genre: "indie", share: 9, venues: ["club", "hall"] },
  { genre: "jazz", share: 6, venues: ["club", "theater"] },
  { genre: "classical", share: 5, venues: ["theater", "hall"] },
  { genre: "country", share: 6, venues: ["hall", "arena", "stadium"] },
  { genre: "metal", share: 5, venues: ["club", "hall"] },
  { genre: "r&b", share: 5, venues: ["hall", "arena"] },
  { genre: "latin", share: 5, venues: ["club", "hall", "arena"] },
  { genre: "folk", share: 4, venues: ["club", "theater"] },
  { genre: "punk", share: 3, venues: ["club"] },
  { genre: "k-pop", share: 2, venues: ["arena", "stadium"] },
  { genre: "blues", share: 2, venues: ["club", "theater"] },
];

export type Sport = "basketball" | "hockey" | "football" | "soccer" | "baseball" | "cricket";

/** Leagues, the countries whose venues host them, and where they play. */
export const LEAGUES: readonly { league: string; sport: Sport; countries: readonly string[] }[] = [
  { league: "NBA", sport: "basketball", countries: ["US", "CA"] },
  { league: "NHL", sport: "hockey", countries: ["US", "CA"] },
  { league: "NFL", sport: "football", countries: ["US"] },
  { league: "MLB", sport: "baseball", countries: ["US", "CA"] },
  { league: "MLS", sport: "soccer", countries: ["US", "CA"] },
  { league: "Premier League", sport: "soccer", countries: ["GB"] },
  { league: "La Liga", sport: "soccer", countries: ["ES"] },
  { league: "Bundesliga", sport: "soccer", countries: ["DE"] },
  { league: "Serie A", sport: "soccer", countries: ["IT"] },
  { league: "Ligue 1", sport: "soccer", countries: ["FR"] },
  { league: "Eredivisie", sport: "soccer", countries: ["NL"] },
  { league: "Liga MX", sport: "soccer", countries: ["MX"] },
  { league: "Brasileirão", sport: "soccer", countries: ["BR"] },
  { league: "J1 League", sport: "soccer", countries: ["JP"] },
  { league: "K League 1", sport: "soccer", countries: ["KR"] },
  { league: "KBO League", sport: "baseball", countries: ["KR"] },
  {
    league: "EuroLeague",
    sport: "basketball",
    countries: ["ES", "IT", "GR", "TR", "DE", "FR", "LT", "IL", "RS"],
  },
  { league: "AFL", sport: "football", countries: ["AU"] },
  { league: "A-League", sport: "soccer", countries: ["AU"] },
  { league: "Indian Premier League", sport: "cricket", countries: ["IN"] },
];

/** Indoor sports play in arenas, the rest in stadiums. */
export const INDOOR_SPORTS: readonly Sport[] = ["basketball", "hockey"];

/** Local kick-off times by sport, as `HH:MM`. */
export const SPORT_START_TIMES: Record<Sport, readonly string[]> = {
  basketball: ["19:00", "19:30", "20:00", "20:30"],
  hockey: ["19:00", "19:30", "20:00"],
  football: ["13:00", "16:05", "16:25", "20:20"],
  soccer: ["13:30", "15:00", "17:30", "18:30", "20:00", "21:00"],
  baseball: ["13:05", "16:10", "18:40", "19:05"],
  cricket: ["15:30", "19:30"],
};

export const TEAM_NAMES: Record<Sport, readonly string[]> = {
  basketball: ["Comets", "Kings", "Falcons", "Storm", "Blaze", "Wolves", "Giants", "Pilots"],
  hockey: ["Blades", "Bears", "Frost", "Huskies", "Lynx", "Rangers", "Thunder"],
  football: ["Chargers", "Stallions", "Titans", "Ironmen", "Outlaws", "Guardians"],
  soccer: ["FC", "United", "City", "Athletic", "Rovers", "Sporting", "Wanderers"],
  baseball: ["Mariners", "Pioneers", "Sluggers", "Cardinals", "Owls", "Miners"],
  cricket: ["Super Kings", "Knights", "Royals", "Strikers", "Capitals"],
};

export const ADJECTIVES = words(
  "Velvet Electric Silver Midnight Golden Crimson Wild Quiet Neon Hollow Lucky Broken Northern " +
    "Paper Glass Lunar Violet Rusty Atomic Blue Young Static Sunset Savage Gentle Cosmic Burning " +
    "Frozen Bright Secret",
);

export const NOUNS = words(
  "Foxes Harbors Engines Rivers Ghosts Lanterns Tigers Echoes Satellites Wolves Sparrows " +
    "Machines Daughters Sons Kites Arrows Comets Pilots Mirrors Gardens Owls Saints Strangers " +
    "Waves Horses Bandits Roses Cathedrals Signals Tides",
);

export const FIRST_NAMES = words(
  "Ana Leo Maya Jonas Amara Kenji Sofia Mateo Nia Oskar Priya Luca Zara Elias Hana Diego Freya " +
    "Omar Ines Theo Yara Malik Clara Ravi Lena Kofi Mila Sami Iris Noah Aiko Felix June Tomas " +
    "Asha Emil",
);

export const LAST_NAMES = words(
  "Moreau Okafor Lindqvist Tanaka Rossi Novak Silva Haddad Kowalski Brennan Nakamura Fischer " +
    "Mendes Osei Larsen Petrov Quinn Alvarez Park Dubois Keller Mwangi Horvat Costa Byrne Sato " +
    "Weiss Ortega Nilsen Adeyemi",
);

export const TOUR_WORDS = [
  "World",
  "Summer",
  "Farewell",
  "Reunion",
  "Arena",
  "Acoustic",
  "Anniversary",
  "Encore",
];

export const FESTIVAL_THEMES = [
  "Sound",
  "Summer",
  "Jazz",
  "Rock",
  "Electronic",
  "Folk",
  "Lights",
  "Open Air",
];

export const COMEDY_SHOWS = ["Live", "Unfiltered", "Work in Progress", "Late Show", "Stand-Up Tour"];
