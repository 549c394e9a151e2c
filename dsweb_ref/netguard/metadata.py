"""Cloud metadata and platform endpoints: refused whatever an allow-list says.

Reaching one of these from a fetch leaks instance credentials, user data or the host agent's
control channel. Most sit in ranges the default policy already refuses (link-local, private), but a
deployment that allows such a range (a test rig allowing ``169.254.0.0/16``, a VPC allowing
``fd00::/8``) must still never reach them, so :class:`~.addresses.AddressPolicy` checks this table
first, and checks it again for the IPv4 address any IPv6 wrapping carries.

Maintained by hand: each row names the documentation it comes from (the product's own docs page
title). Add a row when a platform documents a new endpoint; the tests cover every row, and every
row inside every IPv6 wrapping the address policy unwraps.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address

__all__ = ["METADATA_ENDPOINTS", "METADATA_NAMES", "MetadataEndpoint"]


@dataclass(frozen=True, slots=True)
class MetadataEndpoint:
    address: IPv4Address | IPv6Address
    platform: str  # who serves it and what it is


def _rows(*rows: tuple[str, str]) -> tuple[MetadataEndpoint, ...]:
    return tuple(MetadataEndpoint(ip_address(address), platform) for address, platform in rows)


METADATA_ENDPOINTS: tuple[MetadataEndpoint, ...] = _rows(
    # The shared link-local address. AWS "Amazon EC2 User Guide: Access instance metadata"; Google
    # "Compute Engine: About VM metadata"; Microsoft "Azure Instance Metadata Service"; Oracle "OCI:
    # Getting Instance Metadata"; "OpenStack Nova: Metadata service"; "DigitalOcean: Droplet Metadata
    # API"; "Hetzner Cloud: Server metadata"; "IBM Cloud VPC: About the metadata service"; "Vultr:
    # Instance metadata"; "Akamai (Linode): Metadata service"; "Huawei Cloud ECS: Obtaining metadata";
    # "Exoscale: Cloud-init metadata".
    ("169.254.169.254", "instance metadata (AWS, GCP, Azure, OCI, OpenStack, DigitalOcean, Hetzner, ...)"),
    ("fe80::a9fe:a9fe", "the link-local IPv6 spelling of 169.254.169.254"),
    # AWS "Amazon EC2 User Guide: Access instance metadata" (IMDS over IPv6, Nitro instances).
    ("fd00:ec2::254", "AWS instance metadata over IPv6"),
    # AWS "Amazon VPC User Guide: Amazon DNS server" (Route 53 Resolver at the link-local address).
    ("169.254.169.253", "AWS VPC DNS resolver"),
    ("fd00:ec2::253", "AWS VPC DNS resolver over IPv6"),
    # AWS "Amazon EC2 User Guide: Set the time for your instance" (Amazon Time Sync Service).
    ("169.254.169.123", "AWS Time Sync service"),
    ("fd00:ec2::123", "AWS Time Sync service over IPv6"),
    # AWS "Amazon ECS Developer Guide: Task IAM role" and "Task metadata endpoint version 2".
    ("169.254.170.2", "AWS ECS task metadata and credentials"),
    # AWS "Amazon EKS User Guide: EKS Pod Identity" (the Pod Identity Agent).
    ("169.254.170.23", "AWS EKS Pod Identity agent"),
    ("fd00:ec2::23", "AWS EKS Pod Identity agent over IPv6"),
    # Google "Compute Engine: About VM metadata" (metadata server over IPv6).
    ("fd20:ce::254", "Google Cloud metadata server over IPv6"),
    # Microsoft "Azure: What is IP address 168.63.129.16?" (WireServer, in public space).
    ("168.63.129.16", "Azure WireServer and host agent"),
    # Alibaba Cloud "ECS: Instance metadata".
    ("100.100.100.200", "Alibaba Cloud instance metadata"),
    # Tencent Cloud "CVM: Instance metadata" (metadata.tencentyun.com).
    ("169.254.0.23", "Tencent Cloud instance metadata"),
    # Oracle "OCI: Getting Instance Metadata" (IPv6 endpoint) and Oracle Cloud Classic metadata.
    ("fd00:c1::a9fe:a9fe", "Oracle Cloud instance metadata over IPv6"),
    ("192.0.0.192", "Oracle Cloud (classic) instance metadata"),
    # Scaleway "Instances: Metadata API".
    ("169.254.42.42", "Scaleway instance metadata"),
    ("fd00:42::42", "Scaleway instance metadata over IPv6"),
    # Akamai (Linode) "Metadata service" (IPv6 endpoint).
    ("fd00:a9fe:a9fe::1", "Akamai (Linode) metadata over IPv6"),
)

# Names the same docs give for these endpoints (refused before any lookup).
METADATA_NAMES: frozenset[str] = frozenset(
    {
        "metadata.google.internal",  # Google "Compute Engine: About VM metadata"
        "metadata.goog",  # Google "Compute Engine: About VM metadata"
        "metadata",  # Google: the short name the VM's search domain completes
        "instance-data",  # AWS "Amazon EC2 User Guide: Access instance metadata"
        "instance-data.ec2.internal",  # AWS, the same page (us-east-1 internal domain)
        "metadata.tencentyun.com",  # Tencent Cloud "CVM: Instance metadata"
        "api.metadata.cloud.ibm.com",  # IBM Cloud "VPC: About the metadata service"
        "metadata.platformequinix.com",  # Equinix Metal "Metadata"
        "metadata.packet.net",  # Equinix Metal (formerly Packet) "Metadata"
    }
)
