// Package catalog is what the fake Clever Cloud API knows of each provider,
// independently of any server state: the providers and plans it seeds (ids,
// prices, zones, features), the versions each offers, the list price system,
// the create options each accepts and the environment a new add-on gets. It
// holds plain data and functions of it; pkg/fakeapi serves them.
package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// PlanIDNamespace is the UUIDv5 namespace used for the plan ids the fake has
// to invent (slugs whose real id is not documented): the id of such a plan is
// "plan_" + UUIDv5(PlanIDNamespace, "<providerId>/<slug>"). It never changes,
// so those ids are stable across versions of the fake.
var PlanIDNamespace = uuid.MustParse("3c1f6a2e-8d0b-5e47-9a15-c2e0f4b7d861")

// GeneratedPlanID returns the stable id the fake uses for a plan whose real
// id is unknown.
func GeneratedPlanID(providerID, slug string) string {
	return "plan_" + uuid.NewSHA1(PlanIDNamespace, []byte(providerID+"/"+slug)).String()
}

// Region lists.
var (
	allRegions    = []string{"par", "grahds", "rbx", "rbxhds", "scw", "mtl", "sgp", "syd", "wsw"}
	parOnly       = []string{"par"}
	cellarRegions = []string{"par", "rbxhds"}
	// fsBucketRegions: the FS Bucket regions of the clever-components fixture.
	fsBucketRegions = []string{"mtl", "par", "rbx", "rbxhds", "sgp", "syd", "wsw"}
)

// planSpec describes one seeded plan. An empty id means "generate a stable id".
type planSpec struct {
	slug  string
	name  string // "" = derived from the slug
	id    string // full "plan_<uuid>" or ""
	price float32
	zones []string // nil = every region of the provider
}

// KindSpec describes one seeded provider (one operator kind). The exported
// fields are what the server needs besides the provider it renders.
type KindSpec struct {
	ProviderID string
	name       string
	Family     string // price_id prefix
	Prefix     string // realId prefix
	status     string
	website    string
	logo       string
	shortDesc  string
	longDesc   string
	canUpgrade bool
	regions    []string
	features   func(slug string) []wire.PlanFeature
	plans      []planSpec
	// env generation
	EnvKeys        []string
	DefaultVersion string
	// Operator is the v4 segment of an operator add-on ("keycloak" for
	// /v4/addon-providers/addon-keycloak/...), "" for the others.
	Operator string
}

func p(slug, id string, price float32) planSpec {
	if id != "" {
		id = "plan_" + id
	}
	return planSpec{slug: slug, id: id, price: price}
}

func (ps planSpec) named(n string) planSpec     { ps.name = n; return ps }
func (ps planSpec) in(zones ...string) planSpec { ps.zones = zones; return ps }

// kindSpecs is the seeded catalogue, in the order of
// GET /v2/products/addonproviders.
var kindSpecs = []KindSpec{
	{
		ProviderID: "postgresql-addon", name: "PostgreSQL", Family: "postgresql", Prefix: "postgresql",
		status: "RELEASE", website: "https://www.postgresql.org/", logo: "postgresql",
		shortDesc:  "PostgreSQL is an open source object-relational database system.",
		canUpgrade: true, regions: allRegions, features: dbFeatures, DefaultVersion: "15",
		EnvKeys: []string{"POSTGRESQL_ADDON_DB", "POSTGRESQL_ADDON_HOST", "POSTGRESQL_ADDON_PASSWORD", "POSTGRESQL_ADDON_PORT", "POSTGRESQL_ADDON_URI", "POSTGRESQL_ADDON_USER", "POSTGRESQL_ADDON_VERSION"},
		plans: []planSpec{
			p("dev", "d2ada71a-aa8e-4ead-8cb9-28314664437e", 0).in("mtl", "par", "rbxhds"),
			p("xxs_sml", "c32d00fb-6c06-48a9-a0a3-9d808937ec68", 5.25),
			p("xxs_med", "9ce0a025-f5bd-4ac4-a5be-e2da37c87583", 6.8),
			p("xxs_big", "810751de-ab47-4bd8-918b-b857f9011050", 7.7),
			p("xs_tny", "4b988584-adf5-43a5-891b-9ba1d8fe6d5d", 13),
			p("xs_tin", "", 13), // slug listed by the operator docs; id unknown
			p("xs_sml", "f14478be-b59a-4f64-870c-6887c561492d", 17.5),
			p("xs_med", "cb267d0a-5a2d-4c5b-9709-ee4d321691e7", 20),
			p("xs_big", "a9cfb2d3-c959-4ab2-8b6f-fcbd07aa4f51", 30),
			p("s_sml", "f1f39547-be55-4be0-96d0-5140da25c138", 35),
			p("s_med", "db834b61-21d3-423f-81ac-e8ec5b94a51c", 37.5),
			p("s_big", "06303461-b9d1-4418-a352-7be788c17777", 40),
			p("s_hug", "926643d1-3180-4e6a-bbc0-da828b884f77", 55),
			p("m_sml", "13def017-26d9-469d-88b1-6591cbf4422f", 82),
			p("m_med", "ef13e023-b519-4130-bfa0-54e2e0893362", 92),
			p("m_big", "55d54396-799b-4e01-92ce-34ad68392e7a", 112),
			p("l_sml", "20cf7db8-2687-495f-978d-785a8ac87814", 164),
			p("l_med", "bfc12b2d-37af-4d5c-98b5-f5ce8856965c", 184),
			p("l_big", "166c1a3f-3e7d-427c-9a2d-adeaf6c30c1c", 204),
			p("xl_sml", "9b4505e7-ac36-4caa-ac7d-9e11b6a26b15", 328),
			p("xl_med", "b35727fe-2100-4f7c-82c8-31d9471769ab", 368),
			p("xl_big", "1067ae12-c433-497d-a20f-d16e50b932d9", 448),
			p("xl_hug", "", 528), // listed by the operator docs; id unknown
			p("xxl_sml", "1c8a4179-78ef-4bdd-bfd7-7f389782b8c6", 796),
			p("xxl_med", "5e33d20a-fe32-4b4f-91f0-b59bf0deae13", 892),
			p("xxl_big", "d3131cb3-5d92-4b8c-b3db-30e8be4716af", 1084),
			p("xxl_hug", "e89e0986-2664-46b1-aaff-305b9c6ec552", 1276),
			p("xxxl_sml", "5601b1c6-9850-4a02-9288-8894670f0d7d", 1598),
			p("xxxl_med", "9c7779d2-2701-4420-bd8a-3e7b49083847", 1822),
			p("xxxl_big", "52b00af0-b49f-477b-a2bb-05e6bdf057af", 1990),
		},
	},
	{
		ProviderID: "redis-addon", name: "Redis", Family: "redis", Prefix: "redis",
		status: "RELEASE", website: "https://redis.io/", logo: "redis",
		shortDesc:  "Redis is an open source, in-memory data structure store.",
		canUpgrade: true, regions: allRegions, features: redisFeatures, DefaultVersion: "7.2.4",
		EnvKeys: []string{"REDIS_HOST", "REDIS_PASSWORD", "REDIS_PORT", "REDIS_TOKEN", "REDIS_URL", "REDIS_VERSION"},
		plans: []planSpec{
			p("s_mono", "", 10).named("S"),
			p("m_mono", "", 20).named("M"),
			p("l_mono", "", 40).named("L"),
			p("xl_mono", "", 80).named("XL"),
			p("xxl_mono", "", 160).named("2XL"),
			p("xxxl_mono", "", 320).named("3XL"),
			p("xxxxl_mono", "", 640).named("4XL"),
		},
	},
	{
		ProviderID: "mysql-addon", name: "MySQL", Family: "mysql", Prefix: "mysql",
		status: "RELEASE", website: "https://www.mysql.com/", logo: "mysql",
		shortDesc:  "MySQL is an open source relational database management system.",
		canUpgrade: true, regions: allRegions, features: dbFeatures, DefaultVersion: "8.0",
		EnvKeys: []string{"MYSQL_ADDON_DB", "MYSQL_ADDON_HOST", "MYSQL_ADDON_PASSWORD", "MYSQL_ADDON_PORT", "MYSQL_ADDON_URI", "MYSQL_ADDON_USER", "MYSQL_ADDON_VERSION"},
		plans: []planSpec{
			p("dev", "bf78ef5b-aedd-4024-973a-c2ff45541b88", 0),
			p("xxs_sml", "7ab494e2-c319-4330-8170-35d78738c1ee", 5),
			p("xxs_med", "53d3c47d-ce81-466b-8acb-d5efaa68d27b", 5.9),
			p("xxs_big", "b7ee59a4-4115-41b8-b735-e44378b95c57", 6.8),
			p("xs_tny", "0ffb4a1e-ac15-47c6-965f-f87ac990d99c", 13),
			p("xs_tin", "", 13), // slug listed by the operator docs; id unknown
			p("xs_sml", "bde0b41f-77a7-4285-a08c-b8f4d9780fc4", 22),
			p("xs_med", "889ddd44-68e1-4473-b152-a1abcaeec5b0", 24.5),
			p("xs_big", "01d5d079-e900-49c7-8273-4fb3473eedea", 27),
			p("s_sml", "445566dd-b996-456f-96e3-186c29f4bd11", 44),
			p("s_med", "1940a893-ff6b-4c64-85e7-4955bb3355c0", 46.5),
			p("s_big", "a367b384-2942-4226-884c-5211b79aae81", 49),
			p("m_sml", "97afb4d4-cfeb-4fcb-966f-6072c6c327dc", 103),
			p("m_med", "ead3f4d7-a920-4b8c-8706-8fa8280d0bcc", 113.6),
			p("m_big", "d7f7bcff-df64-4326-a8f7-9d112d75bbff", 133.6),
			p("l_sml", "65af8c37-a9ca-4f37-8490-c727a9d7fe23", 207.2),
			p("l_med", "786d19e3-d5ec-43d1-bb99-4bdf51d1708f", 227.2),
			p("l_big", "cecdd927-0c2b-4df5-80bf-7a3956b7da45", 247.2),
			p("xl_sml", "85292520-3687-488a-aefc-1884349205e4", 414.4),
			p("xl_med", "b6cac148-b1fe-4018-a605-9ecd92b436d1", 454.4),
			p("xl_big", "df6d36d3-07a4-4027-a0bb-333240a6b7c8", 534.4),
			p("xxl_sml", "8c48584e-4d0a-43db-91a1-f2d1a3475fe5", 1022),
			p("xxl_med", "f6108804-9258-41f3-9920-0b5e0a41cb60", 1134),
			p("xxl_big", "c26fc00b-abfb-44ec-951d-73ed65892f3e", 1358),
			p("xxl_hug", "9f7b1d05-36e7-493d-a32f-af0507477af0", 1582),
		},
	},
	{
		ProviderID: "mongodb-addon", name: "MongoDB", Family: "mongodb", Prefix: "mongodb",
		status: "RELEASE", website: "https://www.mongodb.com/", logo: "mongodb",
		shortDesc:  "MongoDB is a document-oriented NoSQL database.",
		canUpgrade: true, regions: allRegions, features: dbFeatures, DefaultVersion: "4.0.3",
		EnvKeys: []string{"MONGODB_ADDON_DB", "MONGODB_ADDON_HOST", "MONGODB_ADDON_PASSWORD", "MONGODB_ADDON_PORT", "MONGODB_ADDON_URI", "MONGODB_ADDON_USER", "MONGODB_ADDON_VERSION"},
		plans: []planSpec{
			p("dev", "847dd55f-0847-4497-9e53-7eef4281e068", 0).in("par", "rbxhds"),
			p("xs_sml", "b53983a2-63d3-472d-8c98-f1bdea682912", 17.5),
			p("xs_med", "14ab2ba4-4b61-4e4f-8971-f26e7daa4963", 22.5),
			p("xs_big", "8c379b80-6f2d-4b93-8839-8cb14aee4218", 30),
			p("s_sml", "5ad112b9-15ca-4c1d-800d-f1cb2989ee83", 37.5),
			p("s_med", "01fd9ba8-2e8f-4a0a-bbf7-aecb4d982780", 45),
			p("s_big", "b60a7496-f44d-4f95-b942-c2445958d58a", 55),
			p("m_sml", "8c14d2c0-05fe-4137-912b-1e99b01b871d", 97),
			p("m_med", "5f1e6e86-a9d7-4698-b6c1-6ef5935d16b7", 112),
			p("M_big", "e8036bc6-5341-4c6e-b843-f4c60d442198", 122), // capital M as in the real data
			p("m_hug", "", 142), // listed by the operator docs; id unknown
			p("l_sml", "513675e4-32c0-4b3a-991c-24fcff62b0cf", 194),
			p("l_med", "66f4b19c-621a-4b39-892d-0e6f0bf62fed", 244),
			p("l_big", "24bbde1f-e8c7-4a45-b8bf-1ab1e320049c", 294),
			p("xl_sml", "36429877-93c4-4639-83f0-cdc96493caf3", 438),
			p("xl_med", "e4745876-6013-48fc-9cbf-c7a49be84cb4", 513),
			p("xl_big", "ffdd05ce-5f30-4750-94c5-424899d1f89d", 588),
			p("xxl_sml", "98370e12-e54a-4dc1-8ee4-4d4f3007f3eb", 1000),
			p("xxl_med", "8da4539d-198b-48da-9d4e-df4e832085fe", 1075),
			p("xxl_big", "e6030ef6-005a-4f77-939d-f1395b02f5d6", 1150),
		},
	},
	{
		ProviderID: "addon-pulsar", name: "Pulsar", Family: "pulsar", Prefix: "pulsar",
		status: "BETA_PUB", website: "https://pulsar.apache.org/", logo: "pulsar",
		shortDesc: "Apache Pulsar, a distributed messaging and streaming platform.",
		regions:   parOnly, features: simpleFeatures("Shared"),
		EnvKeys: []string{"ADDON_PULSAR_BINARY_PORT", "ADDON_PULSAR_BINARY_URL", "ADDON_PULSAR_HOSTNAME", "ADDON_PULSAR_HTTP_PORT", "ADDON_PULSAR_HTTP_URL", "ADDON_PULSAR_NAMESPACE", "ADDON_PULSAR_TENANT", "ADDON_PULSAR_TOKEN"},
		plans: []planSpec{
			p("beta", "3ad3c5be-5c1e-4dae-bf9a-87120b88fc13", 0).named("Beta"),
		},
	},
	{
		ProviderID: "config-provider", name: "Configuration provider", Family: "config-provider", Prefix: "config",
		status: "RELEASE", website: "https://www.clever-cloud.com/", logo: "config-provider",
		shortDesc: "Share environment variables between applications.",
		regions:   parOnly, features: simpleFeatures("Shared"),
		EnvKeys: []string{},
		plans: []planSpec{
			p("std", "5d8e9596-dd73-4b73-84d9-e165372c5324", 0).named("Standard"),
		},
	},
	{
		ProviderID: "es-addon", name: "Elastic Stack", Family: "elasticsearch", Prefix: "es",
		status: "RELEASE", website: "https://www.elastic.co/", logo: "elasticsearch",
		shortDesc:  "Elasticsearch with Kibana and APM.",
		canUpgrade: true, regions: allRegions, features: esFeatures, DefaultVersion: "8",
		EnvKeys: []string{"ES_ADDON_APM_AUTH_TOKEN", "ES_ADDON_APM_HOST", "ES_ADDON_APM_PASSWORD", "ES_ADDON_APM_USER", "ES_ADDON_HOST", "ES_ADDON_KIBANA_HOST", "ES_ADDON_KIBANA_USER", "ES_ADDON_PASSWORD", "ES_ADDON_URI", "ES_ADDON_USER", "ES_ADDON_VERSION"},
		plans: []planSpec{
			p("xs", "0e0bc5ea-ba21-41e8-865b-1ed48e0163ca", 17),
			p("s", "7675a239-057e-448e-85fb-77b5aa2ef47e", 34),
			p("m", "bb93c360-d60c-4441-b18b-cb530a6b7b11", 58),
			p("l", "33ad969a-2f37-4d47-8707-93315650fc0f", 122),
			p("xl", "0e494649-d62a-45e7-ba81-61c1a5d8503a", 237),
			p("xxl", "56265b48-d826-4484-9fd8-d3038c973027", 458),
			p("xxxl", "a9565b70-7d5b-44b9-892f-de9bc6cade84", 967),
			p("4xl", "31ea6328-7df8-4208-a18d-137d2941f16d", 1887),
			p("5xl", "197dbf8a-c30b-49c9-a2ac-126a0b79efba", 4151),
			p("xxxxl", "", 1887).named("XXXXL"),   // older slug listed by the operator docs
			p("xxxxxl", "", 4151).named("XXXXXL"), // older slug listed by the operator docs
		},
	},
	{
		ProviderID: "kv", name: "Materia KV", Family: "kv", Prefix: "kv",
		status: "ALPHA", website: "https://www.clever-cloud.com/materia/", logo: "materia-kv",
		shortDesc: "Serverless key-value store with a Redis-compatible protocol.",
		regions:   parOnly, features: simpleFeatures("Shared"),
		EnvKeys: []string{"KV_HOST", "KV_PORT", "KV_TOKEN", "KV_TOKEN_ID", "REDISCLI_AUTH", "REDIS_CLI_URL", "REDIS_HOST", "REDIS_PASSWORD", "REDIS_PORT", "REDIS_URL"},
		plans: []planSpec{
			p("alpha", "53a1728d-4b9e-4254-94c4-b19163af587b", 0).named("Alpha"),
		},
	},
	{
		Operator: "metabase", DefaultVersion: "0.56.3",
		ProviderID: "metabase", name: "Metabase", Family: "metabase", Prefix: "metabase",
		status: "RELEASE", website: "https://www.metabase.com/", logo: "metabase",
		shortDesc: "Business intelligence and dashboards.",
		regions:   allRegions, features: simpleFeatures("Dedicated"),
		EnvKeys: []string{"METABASE_URL"},
		plans: []planSpec{
			p("base", "2925d534-7155-4521-8052-d068d7ce8915", 0).named("Base"),
		},
	},
	{
		Operator: "keycloak", DefaultVersion: "26.2.5",
		ProviderID: "keycloak", name: "Keycloak", Family: "keycloak", Prefix: "keycloak",
		status: "RELEASE", website: "https://www.keycloak.org/", logo: "keycloak",
		shortDesc: "Open source identity and access management.",
		regions:   allRegions, features: simpleFeatures("Dedicated"),
		EnvKeys: []string{"CC_KEYCLOAK_ADMIN", "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD", "CC_KEYCLOAK_ADMIN_URL", "CC_KEYCLOAK_FSBUCKET_ID", "CC_KEYCLOAK_JAVA_APPID", "CC_KEYCLOAK_POSTGRES_ID", "CC_KEYCLOAK_URL"},
		plans: []planSpec{
			p("base", "3819e4b3-cc6d-4847-9f02-0db93212956c", 0).named("Base"),
		},
	},
	{
		Operator: "matomo", DefaultVersion: "5.3.2",
		ProviderID: "addon-matomo", name: "Matomo Analytics", Family: "matomo", Prefix: "matomo",
		status: "RELEASE", website: "https://matomo.org/", logo: "matomo",
		shortDesc: "Privacy-friendly web analytics.",
		regions:   allRegions, features: simpleFeatures("Dedicated"),
		EnvKeys: []string{"MATOMO_URL"},
		plans: []planSpec{
			p("beta", "87283ba6-617c-420d-8e37-3350a2fcdd66", 0).named("Beta"),
		},
	},
	{
		Operator: "otoroshi", DefaultVersion: "17.5.0",
		ProviderID: "otoroshi", name: "Otoroshi", Family: "otoroshi", Prefix: "otoroshi",
		status: "RELEASE", website: "https://www.otoroshi.io/", logo: "otoroshi",
		shortDesc: "API gateway and reverse proxy.",
		regions:   allRegions, features: simpleFeatures("Dedicated"),
		EnvKeys: []string{"CC_OTOROSHI_API_URL", "CC_OTOROSHI_INITIAL_ADMIN_LOGIN", "CC_OTOROSHI_INITIAL_ADMIN_PASSWORD", "CC_OTOROSHI_SSO_URL", "CC_OTOROSHI_URL"},
		plans: []planSpec{
			p("base", "d738ee0f-8720-499a-8067-2fca53a2665a", 0).named("Base"),
		},
	},
	{
		ProviderID: "azimutt", name: "Azimutt", Family: "azimutt", Prefix: "azimutt",
		status: "RELEASE", website: "https://azimutt.app/", logo: "azimutt",
		shortDesc: "Database exploration and documentation.",
		regions:   allRegions, features: simpleFeatures("Shared"),
		EnvKeys: []string{},
		plans: []planSpec{
			p("free", "", 0).named("Free"),
		},
	},
	{
		ProviderID: "cellar-addon", name: "Cellar S3 storage", Family: "cellar", Prefix: "cellar",
		status: "RELEASE", website: "https://www.clever-cloud.com/product/cellar/", logo: "cellar",
		shortDesc: "S3-compatible object storage.",
		regions:   cellarRegions, features: simpleFeatures("Shared"),
		EnvKeys: []string{"CELLAR_ADDON_HOST", "CELLAR_ADDON_KEY_ID", "CELLAR_ADDON_KEY_SECRET"},
		plans: []planSpec{
			p("S", "84c85ee3-5fdb-4aca-a727-298ddc14b766", 0).named("S"),
		},
	},
	{
		// FS Bucket: a provider the operator has no typed kind for (the generic Addon kind
		// provisions it). Provider id, realId prefix, plan and env names: Terraform
		// pkg/resources/database/fsbucket, the clever-components plan fixture
		// (../shared/docs/clever-cloud-api-more.md §4.2).
		ProviderID: "fs-bucket", name: "FS Buckets", Family: "fs-bucket", Prefix: "bucket",
		status: "RELEASE", website: "https://www.clever-cloud.com/", logo: "fs-bucket",
		shortDesc: "A file system bucket mounted by applications (FTP access).",
		regions:   fsBucketRegions, features: simpleFeatures("Shared"),
		EnvKeys: []string{"BUCKET_FTP_PASSWORD", "BUCKET_FTP_USERNAME", "BUCKET_HOST"},
		plans: []planSpec{
			p("s", "09345cf9-b8ed-4540-b4f7-80ec422fd27b", 0).named("Basic"),
		},
	},
}

// Kind is a seeded provider plus what the fake needs to provision it.
type Kind struct {
	Spec     *KindSpec
	Provider wire.Provider // full object, with plans
	PlanByID map[string]*wire.Plan
}

// Catalog is the seeded catalogue: Kinds in the order of
// GET /v2/products/addonproviders, and by provider id.
type Catalog struct {
	Kinds []*Kind
	ByID  map[string]*Kind
}

// New builds the seeded catalogue. Every call returns fresh values.
func New() *Catalog {
	c := &Catalog{ByID: map[string]*Kind{}}
	for i := range kindSpecs {
		ks := &kindSpecs[i]
		k := &Kind{Spec: ks, PlanByID: map[string]*wire.Plan{}}
		k.Provider = wire.Provider{AddonProvider: wire.AddonProvider{
			ID:             ks.ProviderID,
			Name:           ks.name,
			Website:        ks.website,
			SupportEmail:   "support@clever-cloud.com",
			GooglePlusName: "",
			TwitterName:    "clever_cloud",
			AnalyticsID:    "",
			ShortDesc:      ks.shortDesc,
			LongDesc:       ks.shortDesc + " Served by the clever-operator fake API; nothing is provisioned.",
			LogoURL:        "https://assets.clever-cloud.com/logos/" + ks.logo + ".svg",
			Status:         ks.status,
			OpenInNewTab:   false,
			CanUpgrade:     ks.canUpgrade,
			Regions:        slices.Clone(ks.regions),
		}, Plans: make([]wire.Plan, 0, len(ks.plans))}
		for _, ps := range ks.plans {
			id := ps.id
			if id == "" {
				id = GeneratedPlanID(ks.ProviderID, ps.slug)
			}
			name := ps.name
			if name == "" {
				name = PlanName(ps.slug)
			}
			zones := ps.zones
			if zones == nil {
				zones = ks.regions
			}
			priceID := ks.Family + "." + ps.slug
			k.Provider.Plans = append(k.Provider.Plans, wire.Plan{
				ID:       id,
				Name:     name,
				Slug:     ps.slug,
				Price:    ps.price,
				PriceID:  &priceID,
				Features: ks.features(ps.slug),
				Zones:    slices.Clone(zones),
			})
		}
		k.Provider.Features = []wire.ProviderFeatureView{}
		seen := map[string]bool{}
		for _, pl := range k.Provider.Plans {
			for _, f := range pl.Features {
				if !seen[f.Name] {
					seen[f.Name] = true
					k.Provider.Features = append(k.Provider.Features, wire.ProviderFeatureView{Name: f.Name, Type: f.Type, NameCode: f.NameCode})
				}
			}
		}
		for i := range k.Provider.Plans {
			pl := &k.Provider.Plans[i]
			if _, dup := k.PlanByID[pl.ID]; dup {
				panic("fakeapi: duplicate plan id " + pl.ID)
			}
			k.PlanByID[pl.ID] = pl
		}
		c.Kinds = append(c.Kinds, k)
		c.ByID[ks.ProviderID] = k
	}
	return c
}

// PlanID returns the id of the plan of providerID whose slug is slug (exact
// match first, then case-insensitive), or "" when there is none.
func (c *Catalog) PlanID(providerID, slug string) string {
	k := c.ByID[providerID]
	if k == nil {
		return ""
	}
	for _, pl := range k.Provider.Plans {
		if pl.Slug == slug {
			return pl.ID
		}
	}
	for _, pl := range k.Provider.Plans {
		if strings.EqualFold(pl.Slug, slug) {
			return pl.ID
		}
	}
	return ""
}

// PlanName derives a display name from a database plan slug:
// "dev" -> "DEV", "xs_sml" -> "XS Small Space", "s" -> "S".
func PlanName(slug string) string {
	size, space, ok := strings.Cut(slug, "_")
	if !ok {
		return strings.ToUpper(slug)
	}
	words := map[string]string{"sml": "Small", "med": "Medium", "big": "Big", "hug": "Huge", "tny": "Tiny", "tin": "Tin", "mono": "Mono"}
	w, ok := words[space]
	if !ok {
		w = space
	}
	return strings.ToUpper(size) + " " + w + " Space"
}

// size of a database plan, derived from the slug prefix.
type planSize struct {
	memory string
	vcpus  string
	disk   int // GB for the "sml" variant
	conns  int
}

var sizes = map[string]planSize{
	"dev":   {"Shared", "Shared", 1, 5},
	"xxs":   {"512 MB", "1", 5, 15},
	"xs":    {"1 GB", "1", 10, 75},
	"s":     {"2 GB", "2", 20, 125},
	"m":     {"4 GB", "4", 40, 250},
	"l":     {"8 GB", "6", 80, 500},
	"xl":    {"16 GB", "8", 160, 750},
	"xxl":   {"32 GB", "16", 320, 1000},
	"xxxl":  {"64 GB", "16", 640, 1500},
	"xxxxl": {"128 GB", "32", 1280, 2000},
	"4xl":   {"128 GB", "32", 1280, 2000},
	"5xl":   {"256 GB", "64", 2560, 3000},
}

func sizeOf(slug string) planSize {
	prefix, _, _ := strings.Cut(strings.ToLower(slug), "_")
	if prefix == "xxxxxl" {
		prefix = "5xl"
	}
	if s, ok := sizes[prefix]; ok {
		return s
	}
	return sizes["s"]
}

func strp(s string) *string { return &s }

func feature(name, typ, value string) wire.PlanFeature {
	return wire.PlanFeature{Name: name, Type: typ, Value: value}
}

// TypeFeature is the "Type" feature of a plan (name code is-dedicated):
// Dedicated or Shared.
func TypeFeature(dedicated bool) wire.PlanFeature {
	f := feature("Type", "STRING", "Shared")
	f.ComputableValue = strp("shared")
	if dedicated {
		f.Value = "Dedicated"
		f.ComputableValue = strp("dedicated")
	}
	f.NameCode = strp("is-dedicated")
	return f
}

func dbFeatures(slug string) []wire.PlanFeature {
	sz := sizeOf(slug)
	disk := sz.disk
	switch {
	case strings.HasSuffix(slug, "_tny"), strings.HasSuffix(slug, "_tin"):
		disk = disk / 2
	case strings.HasSuffix(slug, "_med"):
		disk = disk * 3 / 2
	case strings.HasSuffix(slug, "_big"):
		disk = disk * 2
	case strings.HasSuffix(slug, "_hug"):
		disk = disk * 3
	}
	dedicated := slug != "dev"
	return []wire.PlanFeature{
		feature("Backups", "STRING", "Daily - 7 Retained"),
		feature("Logs", "BOOLEAN", "Yes"),
		feature("Max DB size", "FILESIZE", fmt.Sprintf("%d GB", disk)),
		feature("Max connection limit", "NUMBER", fmt.Sprint(sz.conns)),
		feature("Memory", "BYTES", sz.memory),
		feature("Metrics", "BOOLEAN", "Yes"),
		TypeFeature(dedicated),
		feature("vCPUS", "NUMBER", sz.vcpus),
	}
}

func redisFeatures(slug string) []wire.PlanFeature {
	sz := sizeOf(slug)
	return []wire.PlanFeature{
		feature("Databases", "NUMBER", "100"),
		feature("Max connection limit", "NUMBER", fmt.Sprint(sz.conns*4)),
		feature("Memory", "BYTES", sz.memory),
		feature("Metrics", "BOOLEAN", "Yes"),
		TypeFeature(true),
	}
}

func esFeatures(slug string) []wire.PlanFeature {
	sz := sizeOf(slug)
	return []wire.PlanFeature{
		feature("Disk size", "FILESIZE", fmt.Sprintf("%d GB", sz.disk*2)),
		feature("Memory", "BYTES", sz.memory),
		feature("Nodes", "NUMBER", "1"),
		TypeFeature(true),
		feature("vCPUS", "NUMBER", sz.vcpus),
	}
}

func simpleFeatures(typ string) func(string) []wire.PlanFeature {
	return func(string) []wire.PlanFeature {
		return []wire.PlanFeature{TypeFeature(typ == "Dedicated")}
	}
}
