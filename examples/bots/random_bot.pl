#!/usr/bin/perl
# A bot for the fzmj-bot protocol (docs/protocol.md) in Perl with core modules only (JSON::PP).
#
#     fzmj-eval --agents "exec:perl examples/bots/random_bot.pl" random --hands 400
#
# It reads the public view ("obs": ["view"]) and follows three rules: win when it may (hu),
# discard a tile of the kind it holds fewest of (golds kept), pass on every claim; anything
# else is a uniform choice among the legal actions.
use strict;
use warnings;
use JSON::PP;

my $json = JSON::PP->new->canonical;
$| = 1;    # answer at once: the engine waits for each line
my $HU   = 59;
my $PASS = 61;

sub choose {
    my ($row) = @_;
    my @legal = @{ $row->{legal} };
    my %is    = map { $_ => 1 } @legal;
    return $HU if $is{$HU};
    my $view = $row->{view};
    my @discards = grep { $_ < 27 } @legal;
    if (@discards) {
        my @count = (0) x 27;
        $count[$_]++ for @{ $view->{hand} };    # the hand is a tile list: kinds with repetition
        my $gold = $view->{gold} // -1;
        my @keep = grep { $_ != $gold } @discards;
        @keep = @discards unless @keep;
        my ($best) = sort { $count[$a] <=> $count[$b] or $a <=> $b } @keep;
        return $best;
    }
    return $PASS if $is{$PASS};
    return $legal[ int(rand(@legal)) ];
}

while (my $line = <STDIN>) {
    my $msg  = $json->decode($line);
    my $type = $msg->{type} // '';
    my $reply;
    if ($type eq 'hello') {
        die "random_bot.pl: protocol version $msg->{version} not supported\n" if $msg->{version} != 1;
        srand(($msg->{seed} // 0) % 4294967296);
        $reply = { type => 'hello', protocol => 'fzmj-bot', version => 1, name => 'perl_bot', obs => ['view'] };
    } elsif ($type eq 'reset') {
        srand(($msg->{seed} // 0) % 4294967296);
        next;
    } elsif ($type eq 'act') {
        $reply = { type => 'act', id => $msg->{id}, actions => [ map { choose($_) } @{ $msg->{rows} } ] };
    } else {
        next;
    }
    print $json->encode($reply), "\n";
}
