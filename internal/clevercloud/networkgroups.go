package clevercloud

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Network Groups (issue #18 §3): private WireGuard networks joining applications, add-ons and
// external peers. Routes and shapes from clever-client.js esm/api/v4/network-group.ts and
// src/clients/cc-api/commands/network-group/*.ts (network-group.types.ts: NetworkGroup,
// NetworkGroupMember), read by clever-tools src/models/ng.js and ng-resources.js and by the
// Terraform provider (pkg/tmp/ng.go, pkg/resources/ng.go):
//
//   - the client chooses the id (ng_<uuid>) and POSTs {id, ownerId, label, description, tags,
//     members?}; the answer carries no body, the group appears a moment later (clients poll
//     GET …/networkgroups/{id}, which answers 404 until then);
//   - a member is POSTed as {id, label, domainName, kind}: id is the add-on's real id
//     (postgresql_<uuid>, …), kind ADDON, domainName <id>.m.<ngId>.cc-ng.cloud, the name that
//     resolves to the add-on inside the group; GET …/members/{memberId} answers 404 until it
//     is there;
//   - DELETE of a group or member: no body; gone a moment later.
const (
	RouteNetworkGroups       = "/v4/networkgroups/organisations/{ownerId}/networkgroups"
	RouteNetworkGroup        = "/v4/networkgroups/organisations/{ownerId}/networkgroups/{networkGroupId}"
	RouteNetworkGroupMembers = "/v4/networkgroups/organisations/{ownerId}/networkgroups/{networkGroupId}/members"
	RouteNetworkGroupMember  = "/v4/networkgroups/organisations/{ownerId}/networkgroups/{networkGroupId}/members/{memberId}"

	// NetworkGroupDomain is the zone of members' names (clever-client.js network-group-utils.ts).
	NetworkGroupDomain = "cc-ng.cloud"
	// MemberKindAddon is the kind of an add-on member.
	MemberKindAddon = "ADDON"
)

// NetworkGroupProviders are the add-on providers that may join a Network Group, with the
// prefix of their real ids (clever-client.js NETWORK_GROUP_SUPPORTED_ADDON_PROVIDERS; clever-tools
// NG_MEMBER_PREFIXES). Clients also leave out add-ons on the shared `dev` plan.
var NetworkGroupProviders = map[string]string{
	"es-addon":         "elasticsearch_",
	"mongodb-addon":    "mongodb_",
	"mysql-addon":      "mysql_",
	"postgresql-addon": "postgresql_",
	"redis-addon":      "redis_",
}

// NetworkGroup is a Network Group as GET answers it (the fields the operator reads).
type NetworkGroup struct {
	ID          string               `json:"id"`
	OwnerID     string               `json:"ownerId"`
	Label       string               `json:"label"`
	Description *string              `json:"description"`
	NetworkIP   string               `json:"networkIp"`
	Tags        []string             `json:"tags"`
	Members     []NetworkGroupMember `json:"members"`
	Peers       []map[string]any     `json:"peers"`
	Version     int64                `json:"version"`
}

// NetworkGroupMember is a member of a Network Group. Kind is upper-cased as clever-client.js
// normalises it (the API may answer it in another case).
type NetworkGroupMember struct {
	ID         string `json:"id"`
	Label      string `json:"label,omitempty"`
	DomainName string `json:"domainName"`
	Kind       string `json:"kind"`
}

// NewNetworkGroup is the body of a Network Group creation.
type NewNetworkGroup struct {
	ID          string   `json:"id"`
	OwnerID     string   `json:"ownerId"`
	Label       string   `json:"label"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags"`
}

// MemberDomainName is the name a member resolves to inside a group, as clients build it.
func MemberDomainName(networkGroupID, memberID string) string {
	return fmt.Sprintf("%s.m.%s.%s", memberID, networkGroupID, NetworkGroupDomain)
}

// GetNetworkGroup reads a Network Group (404, IsNotFound: unknown, or not created yet).
func (c *Client) GetNetworkGroup(ctx context.Context, ownerID, id string) (*NetworkGroup, error) {
	cl := &call{method: http.MethodGet, route: RouteNetworkGroup, idempotent: true}
	if err := cl.setPath(RouteNetworkGroup, "ownerId", ownerID, "networkGroupId", id); err != nil {
		return nil, err
	}
	var out NetworkGroup
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	for i := range out.Members {
		out.Members[i].Kind = strings.ToUpper(out.Members[i].Kind)
	}
	return &out, nil
}

// CreateNetworkGroup asks for a Network Group with the id the caller chose (ng_<uuid>); it
// exists once GetNetworkGroup finds it. Not retried here: the caller looks the id up first.
func (c *Client) CreateNetworkGroup(ctx context.Context, ng NewNetworkGroup) error {
	cl := &call{method: http.MethodPost, route: RouteNetworkGroups}
	if err := cl.setPath(RouteNetworkGroups, "ownerId", ng.OwnerID); err != nil {
		return err
	}
	if ng.Tags == nil {
		ng.Tags = []string{}
	}
	if err := cl.setBody(ng); err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// DeleteNetworkGroup asks for a Network Group's deletion (404: already gone).
func (c *Client) DeleteNetworkGroup(ctx context.Context, ownerID, id string) error {
	cl := &call{method: http.MethodDelete, route: RouteNetworkGroup, idempotent: true}
	if err := cl.setPath(RouteNetworkGroup, "ownerId", ownerID, "networkGroupId", id); err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// AddNetworkGroupMember asks for m to join the group; it is a member once the group lists it.
func (c *Client) AddNetworkGroupMember(ctx context.Context, ownerID, networkGroupID string, m NetworkGroupMember) error {
	cl := &call{method: http.MethodPost, route: RouteNetworkGroupMembers}
	if err := cl.setPath(RouteNetworkGroupMembers, "ownerId", ownerID, "networkGroupId", networkGroupID); err != nil {
		return err
	}
	if err := cl.setBody(m); err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// RemoveNetworkGroupMember asks for a member to leave the group (404: not a member).
func (c *Client) RemoveNetworkGroupMember(ctx context.Context, ownerID, networkGroupID, memberID string) error {
	cl := &call{method: http.MethodDelete, route: RouteNetworkGroupMember, idempotent: true}
	if err := cl.setPath(RouteNetworkGroupMember, "ownerId", ownerID, "networkGroupId", networkGroupID, "memberId", memberID); err != nil {
		return err
	}
	return c.do(ctx, cl)
}
